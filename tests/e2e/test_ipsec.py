"""End-to-end tests of ESPEncap and ESPDecap against an independent ESP implementation
(scapy's IPsec layer, on the `cryptography` package).

Both suites (AES-GCM-128 and AES-128-CBC with HMAC-SHA1-96): packets sealed by Sluice are
opened by scapy, which checks the ICV and the padding; packets sealed by scapy are opened by
Sluice. Also: replayed and tampered scapy packets are dropped and counted by reason.
"""
import re

import pytest
from scapy.all import IP, TCP, UDP, ICMP, Ether, Raw, raw, rdpcap, wrpcap
from scapy.layers.ipsec import ESP, SecurityAssociation

GW_A, GW_B = "198.18.100.1", "198.18.100.2"
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
GCM_KEY = bytes.fromhex("4a9f2e1c7b3d5a6e8f0112233445566778899aab")
ENC_KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
AUTH_KEY = bytes.fromhex("0123456789abcdef0123456789abcdef01234567")

SUITES = {
    "aes-gcm-128": (dict(crypt_algo="AES-GCM", crypt_key=GCM_KEY), f"aead 0x{GCM_KEY.hex()}\n"),
    "aes-cbc-128-hmac-sha1": (
        dict(crypt_algo="AES-CBC", crypt_key=ENC_KEY, auth_algo="HMAC-SHA1-96",
             auth_key=AUTH_KEY),
        f"enc 0x{ENC_KEY.hex()}\nauth 0x{AUTH_KEY.hex()}\n",
    ),
}


def inner_packets():
    """IPv4 packets of several protocols and sizes (1 to 1400 bytes of payload)."""
    out = []
    for k, n in enumerate([1, 2, 3, 13, 14, 15, 16, 17, 64, 100, 511, 1000, 1400]):
        l4 = [UDP(sport=4000 + k, dport=53), TCP(sport=40000, dport=80, flags="PA"),
              ICMP(type=8, id=k, seq=k)][k % 3]
        p = IP(src=f"198.18.1.{k + 2}", dst="198.18.2.2", tos=0x28, id=k) / l4 / Raw(
            bytes((i * 13 + k) % 256 for i in range(n)))
        out.append(IP(raw(p)))
    return out


def sa(alg, spi=0x1001):
    return SecurityAssociation(ESP, spi=spi, tunnel_header=IP(src=GW_A, dst=GW_B),
                               **SUITES[alg][0])


def write_frames(path, packets):
    frames = []
    for k, p in enumerate(packets):
        f = Ether(src=MAC_A, dst=MAC_B) / p
        f.time = 1 + k * 0.001
        frames.append(f)
    wrpcap(str(path), frames)


def details(proc, handler):
    m = re.search(rf"^{re.escape(handler)}:\n((?:.*\n)*?)(?:\S+:\n|\Z)", proc.stdout, re.M)
    return m.group(1) if m else ""


@pytest.mark.parametrize("alg", SUITES)
def test_scapy_opens_what_sluice_seals(run_sluice, tmp_path, alg):
    (tmp_path / "sa.keys").write_text(SUITES[alg][1])
    sent = inner_packets()
    write_frames(tmp_path / "in.pcap", sent)
    run_sluice(f"""FromDump(in.pcap, STOP true) -> Strip(14)
        -> enc :: ESPEncap(0x1001, {GW_A}, {GW_B}, ALG {alg}, KEYFILE sa.keys)
        -> EtherEncap(0x0800, {MAC_A}, {MAC_B}) -> ToDump(out.pcap);""")
    out = rdpcap(str(tmp_path / "out.pcap"))
    assert len(out) == len(sent)
    peer = sa(alg)
    for k, (f, p) in enumerate(zip(out, sent)):
        outer = f[IP]
        assert outer.proto == 50 and outer.src == GW_A and outer.dst == GW_B
        assert outer.tos == 0x28
        c = outer.copy()
        del c.chksum
        assert IP(raw(c)).chksum == outer.chksum
        esp = outer[ESP]
        assert esp.spi == 0x1001 and esp.seq == k + 1
        got = peer.decrypt(IP(raw(outer)))
        assert raw(got) == raw(p), f"packet {k}"


@pytest.mark.parametrize("alg", SUITES)
def test_sluice_opens_what_scapy_seals(run_sluice, tmp_path, alg):
    (tmp_path / "sa.keys").write_text(SUITES[alg][1])
    sent = inner_packets()
    peer = sa(alg)
    sealed = [peer.encrypt(p, seq_num=k + 1) for k, p in enumerate(sent)]
    # Then: a replay of packet 3, a tampered copy of packet 4 sent first, an unknown SPI.
    tampered = bytearray(raw(peer.encrypt(sent[4], seq_num=len(sent) + 1)))
    tampered[-20] ^= 1
    stranger = sa(alg, spi=0x9999).encrypt(sent[0], seq_num=1)
    write_frames(tmp_path / "in.pcap",
                 [IP(bytes(tampered))] + sealed + [sealed[3], stranger])
    proc = run_sluice(f"""FromDump(in.pcap, STOP true) -> Strip(14) -> CheckIPHeader
        -> dec :: ESPDecap(0x1001, ALG {alg}, KEYFILE sa.keys)
        -> EtherEncap(0x0800, {MAC_A}, {MAC_B}) -> ToDump(out.pcap);""",
                      "-h", "dec.count", "-h", "dec.drop_details")
    out = rdpcap(str(tmp_path / "out.pcap"))
    assert [raw(f[IP]) for f in out] == [raw(p) for p in sent]
    text = details(proc, "dec.drop_details")
    for reason in ["1 bad ICV", "1 replayed", "1 unknown SPI"]:
        assert reason in text, text
