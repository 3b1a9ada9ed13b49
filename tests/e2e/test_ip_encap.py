"""End-to-end tests of UDPIPEncap, ICMPIPEncap and MarkIPCE, checked with scapy.

A scapy-crafted pcap of varied IPv4 frames goes through `FromDump -> Strip(14) -> element
-> EtherEncap/Unstrip -> ToDump`; the output pcap is dissected with scapy, whose own checksum
computation must agree with the checksums Sluice wrote.
"""
import re

import pytest
from scapy.all import (ICMP, IP, TCP, UDP, Ether, IPOption_RR, Raw, raw, rdpcap,
                       wrpcap)

SRC, DST = "198.18.0.1", "198.19.0.2"
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
ETHER_ENCAP = f"EtherEncap(0x0800, {MAC_A}, {MAC_B})"
TOS = [0x00, 0x01, 0x02, 0x03, 0xB8, 0xB9, 0xBA, 0xBB]


def frames():
    """IPv4 frames of every ECN codepoint, several protocols and sizes, some with options."""
    out = []
    for k in range(24):
        ip = IP(src=f"198.18.1.{k + 1}", dst=f"198.19.{k % 3}.{k + 10}", id=100 + k,
                tos=TOS[k % len(TOS)])
        if k % 5 == 0:
            ip.options = [IPOption_RR(routers=["0.0.0.0"])]
        l4 = [UDP(sport=5000 + k, dport=6000), TCP(sport=7000, dport=80, flags="S"),
              ICMP(type=8, id=k, seq=k)][k % 3]
        p = Ether(src=MAC_A, dst=MAC_B) / ip / l4 / Raw(bytes(range(k * 7 % 61)))
        p.time = 1 + k * 0.001
        out.append(p)
    return out


@pytest.fixture
def pcap(tmp_path):
    f = tmp_path / "in.pcap"
    wrpcap(str(f), frames())
    return f


def handlers(proc):
    """Handler values printed by several -h options."""
    return dict(re.findall(r"^(\S+):\n(.*)$", proc.stdout, re.M))


def ip_checksum_ok(ip):
    """True if scapy computes the same IP header checksum."""
    c = ip.copy()
    del c.chksum
    return IP(raw(c)).chksum == ip.chksum


def transport_checksum_ok(ip, layer):
    """True if scapy computes the same checksum for the transport header `layer`."""
    c = ip.copy()
    del c[layer].chksum
    return IP(raw(c))[layer].chksum == ip[layer].chksum


def payloads():
    """The IP packets of the input frames (what Strip(14) leaves)."""
    return [raw(p)[14:] for p in frames()]


def encapsulated(run_sluice, pcap, tmp_path, element):
    """Runs the input through `element` between Strip(14) and EtherEncap; yields each output
    frame's IPv4 header (checked for the fields every encapsulation sets and a checksum that
    scapy agrees with), its sequence number and the original packet it carries."""
    run_sluice(f"FromDump({pcap}, STOP true) -> Strip(14) -> {element} -> {ETHER_ENCAP} "
               "-> ToDump(out.pcap);")
    out = rdpcap(str(tmp_path / "out.pcap"))
    inner = payloads()
    assert len(out) == len(inner)
    for k, (p, orig) in enumerate(zip(out, inner)):
        ip = p[IP]
        assert (ip.version, ip.ihl, ip.tos, ip.flags, ip.frag) == (4, 5, 0, 0, 0)
        assert ip.src == SRC
        assert ip_checksum_ok(ip)
        yield ip, k, orig


@pytest.mark.parametrize("checksum", [True, False])
def test_udpipencap(run_sluice, pcap, tmp_path, checksum):
    element = f"UDPIPEncap({SRC}, 40000, {DST}, 40001, {str(checksum).lower()})"
    for ip, k, orig in encapsulated(run_sluice, pcap, tmp_path, element):
        assert (ip.id, ip.ttl, ip.proto, ip.dst) == (k, 250, 17, DST)
        assert ip.len == 28 + len(orig)
        u = ip[UDP]
        assert (u.sport, u.dport, u.len) == (40000, 40001, 8 + len(orig))
        if checksum:
            assert u.chksum != 0 and transport_checksum_ok(ip, UDP)
        else:
            assert u.chksum == 0
        assert raw(ip)[28:] == orig


def test_udpipencap_dst_anno(run_sluice, pcap, tmp_path):
    element = f"GetIPAddress(16) -> UDPIPEncap({SRC}, 40000, DST_ANNO, 40001)"
    dsts = [p[IP].dst for p in frames()]
    for ip, k, orig in encapsulated(run_sluice, pcap, tmp_path, element):
        assert ip.dst == dsts[k]
        assert transport_checksum_ok(ip, UDP)


def test_icmpipencap_echo(run_sluice, pcap, tmp_path):
    element = f"ICMPIPEncap({SRC}, {DST}, echo, IDENTIFIER 77)"
    for ip, k, orig in encapsulated(run_sluice, pcap, tmp_path, element):
        assert (ip.id, ip.ttl, ip.proto, ip.dst) == (k + 1, 255, 1, DST)
        assert ip.len == 28 + len(orig)
        i = ip[ICMP]
        assert (i.type, i.code, i.id, i.seq) == (8, 0, 77, k + 1)
        assert transport_checksum_ok(ip, ICMP)
        assert raw(ip)[28:] == orig


@pytest.mark.parametrize("typ,code,numbers,hlen,seq", [
    ("timestamp", "0", (13, 0), 20, True),
    ("echo-reply", "0", (0, 0), 8, True),
    ("unreachable", "port", (3, 3), 8, False),
    ("timeexceeded", "1", (11, 1), 8, False),
])
def test_icmpipencap_types(run_sluice, pcap, tmp_path, typ, code, numbers, hlen, seq):
    element = f"ICMPIPEncap({SRC}, {DST}, {typ}, {code}, 9, 500)"
    for ip, k, orig in encapsulated(run_sluice, pcap, tmp_path, element):
        assert ip.id == 500 + k and ip.len == 20 + hlen + len(orig)
        i = ip[ICMP]
        assert (i.type, i.code) == numbers
        assert transport_checksum_ok(ip, ICMP)
        icmp = raw(ip)[20:]
        ident_seq = (9).to_bytes(2, "big") + (500 + k).to_bytes(2, "big") if seq else bytes(4)
        assert icmp[4:8] == ident_seq
        if typ == "timestamp":
            assert (i.ts_ori, i.ts_rx, i.ts_tx) == (0, 0, 0)
        assert icmp[hlen:] == orig


def split_by_ecn(pkts):
    ect = [p for p in pkts if p[IP].tos & 3]
    not_ect = [p for p in pkts if not p[IP].tos & 3]
    return ect, not_ect


def assert_marked(out, orig):
    """`out` is `orig` with the ECN field set to CE and a correct header checksum."""
    assert len(out) == len(orig)
    for p, o in zip(out, orig):
        assert p[IP].tos == o[IP].tos | 3
        assert ip_checksum_ok(p[IP])
        a, b = bytearray(raw(p)), bytearray(raw(o))
        for buf in (a, b):
            buf[15] = 0
            buf[24:26] = b"\0\0"
        assert a == b


def test_markipce(run_sluice, pcap, tmp_path):
    proc = run_sluice(f"FromDump({pcap}, STOP true) -> Strip(14) -> CheckIPHeader -> m :: MarkIPCE "
                      "-> Unstrip(14) -> ToDump(out0.pcap); m[1] -> Unstrip(14) -> ToDump(out1.pcap);",
                      "-h", "m.count", "-h", "m.drops")
    ect, not_ect = split_by_ecn(frames())
    assert_marked(rdpcap(str(tmp_path / "out0.pcap")), ect)
    assert [raw(p) for p in rdpcap(str(tmp_path / "out1.pcap"))] == [raw(p) for p in not_ect]
    assert handlers(proc) == {"m.count": str(len(ect)), "m.drops": "0"}


def test_markipce_drop_and_force(run_sluice, pcap, tmp_path):
    proc = run_sluice(f"FromDump({pcap}, STOP true) -> Strip(14) -> CheckIPHeader -> m :: MarkIPCE "
                      "-> Unstrip(14) -> ToDump(out0.pcap);", "-h", "m.count", "-h", "m.drops")
    ect, not_ect = split_by_ecn(frames())
    assert_marked(rdpcap(str(tmp_path / "out0.pcap")), ect)
    assert handlers(proc) == {"m.count": str(len(ect)), "m.drops": str(len(not_ect))}

    proc = run_sluice(f"FromDump({pcap}, STOP true) -> Strip(14) -> CheckIPHeader "
                      "-> m :: MarkIPCE(FORCE true) -> Unstrip(14) -> ToDump(out0.pcap);",
                      "-h", "m.count", "-h", "m.drops")
    assert_marked(rdpcap(str(tmp_path / "out0.pcap")), frames())
    assert handlers(proc) == {"m.count": str(len(frames())), "m.drops": "0"}
