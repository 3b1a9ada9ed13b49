"""End-to-end tests of IPReassembler, checked with scapy.

scapy's fragment() cuts a few large UDP datagrams into fragments; the fragments of all of
them are shuffled together (with a duplicate, an unfragmented packet and one datagram that
misses a fragment) into a pcap that Sluice reassembles. The output pcap is dissected with
scapy: every complete datagram must come out once, byte for byte equal to the original, with
valid IP and UDP checksums and the Ethernet header of its first fragment.

A second test sends large datagrams through Sluice's own IPFragmenter and then
IPReassembler, and checks the fragments in between and the datagrams at the end.
"""
import random

from scapy.all import IP, UDP, Ether, Raw, fragment, rdpcap, wrpcap

SRC, DST = "198.18.0.2", "198.19.0.2"
MAC_H, MAC_R = "02:00:00:00:00:02", "00:00:c0:ae:67:ef"


def datagram(ident, n, seed):
    rnd = random.Random(seed)
    payload = bytes(rnd.randrange(256) for _ in range(n))
    return IP(src=SRC, dst=DST, id=ident, ttl=64) / UDP(sport=4000, dport=5000) / Raw(payload)


def handlers(proc):
    """The values of the handlers read with -h: {name: value}."""
    blocks = [b.split("\n", 1) for b in proc.stdout.strip().split("\n\n")]
    return {b[0].rstrip(":"): b[1].strip() for b in blocks}


def checksums_ok(ip):
    """True if the IP header and UDP checksums of `ip` (an IP layer) are right."""
    fresh = IP(bytes(ip))
    del fresh.chksum
    del fresh[UDP].chksum
    fresh = IP(bytes(fresh))
    return fresh.chksum == ip.chksum and fresh[UDP].chksum == ip[UDP].chksum


def test_scapy_fragments_reassemble_byte_for_byte(run_sluice, tmp_path):
    originals = {ident: datagram(ident, n, ident) for ident, n in
                 [(101, 3000), (102, 8000), (103, 1500), (104, 20000), (105, 2000)]}
    frames = []
    for ident, d in originals.items():
        for k, f in enumerate(fragment(d, fragsize=ident % 4 * 256 + 512)):
            # Each frame carries the fragment's index in its source MAC address.
            frames.append(Ether(src=f"02:00:00:00:{ident - 100:02x}:{k:02x}", dst=MAC_R) / f)
    incomplete = fragment(datagram(106, 4000, 106), fragsize=1000)
    frames += [Ether(src=MAC_H, dst=MAC_R) / f for f in incomplete[1:]]
    whole = Ether(src=MAC_H, dst=MAC_R) / datagram(107, 200, 107)
    frames.append(whole)
    random.Random(5).shuffle(frames)
    # A duplicate of the first fragment of 102 to arrive, while 102 is still incomplete.
    first = next(k for k, f in enumerate(frames) if f[IP].id == 102)
    frames.insert(first + 1, frames[first].copy())
    for k, f in enumerate(frames):
        f.time = 1 + k * 0.001
    wrpcap(str(tmp_path / "in.pcap"), frames)

    proc = run_sluice(
        f"FromDump({tmp_path / 'in.pcap'}, STOP true) -> Strip(14) -> CheckIPHeader"
        " -> r :: IPReassembler -> Unstrip(14) -> ToDump(out.pcap, SNAPLEN 0);",
        "-h", "r.reassembled", "-h", "r.drops", "-h", "r.drop_details", "-h", "r.length")
    h = handlers(proc)
    out = rdpcap(str(tmp_path / "out.pcap"))

    assert sorted(p[IP].id for p in out) == [101, 102, 103, 104, 105, 107]
    for p in out:
        ip = p[IP]
        assert checksums_ok(ip), ip.id
        if ip.id == 107:
            assert bytes(p) == bytes(whole)
            continue
        orig = originals[ip.id]
        assert bytes(ip) == bytes(orig), ip.id
        assert bytes(ip[UDP].payload) == bytes(orig[UDP].payload)
        assert ip.flags == 0 and ip.frag == 0 and ip.len == len(orig)
        assert p[Ether].src == f"02:00:00:00:{ip.id - 100:02x}:00", "first fragment's header"
    assert h["r.reassembled"] == "5"
    # The datagram missing a fragment was still waiting when the run stopped: its 4 fragments
    # are counted as drops then, beside the duplicate.
    assert h["r.drops"] == "5"
    assert "1 duplicate" in h["r.drop_details"]
    assert "4 incomplete at stop" in h["r.drop_details"]
    assert h["r.length"] == "0"


def test_round_trip_through_ip_fragmenter(run_sluice, tmp_path):
    originals = [Ether(src=MAC_H, dst=MAC_R) / datagram(200 + k, n, k)
                 for k, n in enumerate([1000, 4000, 9000, 30000])]
    for k, f in enumerate(originals):
        f.time = 1 + k * 0.001
    wrpcap(str(tmp_path / "in.pcap"), originals)

    proc = run_sluice(
        f"FromDump({tmp_path / 'in.pcap'}, STOP true) -> Strip(14) -> CheckIPHeader"
        " -> fr :: IPFragmenter(576) -> ToDump(frags.pcap, ENCAP IP)"
        " -> r :: IPReassembler -> ToDump(out.pcap, ENCAP IP, SNAPLEN 0);",
        "-h", "fr.fragments", "-h", "r.reassembled", "-h", "r.drops")
    h = handlers(proc)

    frags = rdpcap(str(tmp_path / "frags.pcap"))
    assert len(frags) == int(h["fr.fragments"])
    assert all(len(f[IP]) <= 576 and (f[IP].flags.MF or f[IP].frag) for f in frags)
    out = rdpcap(str(tmp_path / "out.pcap"))
    assert [bytes(p[IP]) for p in out] == [bytes(o[IP]) for o in originals]
    assert all(checksums_ok(p[IP]) for p in out)
    assert h["r.reassembled"] == "4"
    assert h["r.drops"] == "0"
