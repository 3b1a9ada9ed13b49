"""End-to-end tests of the IPv6 header elements, checked with scapy.

Scapy-crafted pcaps of Ethernet frames go through `FromDump -> Strip(14) -> elements ->
Unstrip(14) (or EtherEncap) -> ToDump`; the output pcaps are dissected with scapy, and
fragments are put back together with scapy's `defragment6`. Sluice's own parsers are never
used to check results.
"""
import re

from scapy.all import (IP, UDP, Ether, ICMPv6EchoRequest, IPv6, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, Padding, Raw,
                       raw, rdpcap, wrpcap)
from scapy.layers.inet6 import defragment6

A, B = "2001:db8::1", "2001:db8:1::2"
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"


def frame(ip, t=1.0):
    p = Ether(src=MAC_A, dst=MAC_B) / ip
    p.time = t
    return p


def udp6(src=A, dst=B, hlim=64, n=16, **kw):
    return IPv6(src=src, dst=dst, hlim=hlim, **kw) / UDP(sport=4000, dport=5000) / Raw(
        bytes(i % 256 for i in range(n)))


def write(tmp_path, name, frames):
    f = tmp_path / name
    wrpcap(str(f), frames)
    return f


def handlers(proc):
    """Handler values printed by -h options: {name: text} (text may span lines)."""
    out, name, buf = {}, None, []
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\S+\.\S+):$", line)
        if m:
            if name:
                out[name] = "\n".join(buf).strip()
            name, buf = m.group(1), []
        else:
            buf.append(line)
    if name:
        out[name] = "\n".join(buf).strip()
    return out


def ip6_bytes(p):
    return raw(p)[14:]


def test_check_ip6_header_passes_good_and_counts_bad(run_sluice, tmp_path):
    good = [udp6(n=k) for k in range(3)]
    padded = frame(udp6(n=0)) / Padding(b"\xee" * 6)
    bad_version = bytearray(raw(frame(udp6())))
    bad_version[14] = 0x45
    too_long = bytearray(raw(frame(udp6())))
    too_long[14 + 4:14 + 6] = (500).to_bytes(2, "big")
    short = raw(frame(udp6()))[:14 + 30]
    frames = [frame(p) for p in good] + [padded]
    frames += [Ether(bytes(b)) for b in (bad_version, too_long, short)]
    frames += [frame(udp6(src="ff02::1")), frame(udp6(src="2001:db8::bad"))]
    pcap = write(tmp_path, "in.pcap", frames)
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> c :: CheckIP6Header(2001:db8::bad) "
        "-> Unstrip(14) -> ToDump(good.pcap); c[1] -> Unstrip(14) -> ToDump(bad.pcap);",
        "-h", "c.drops", "-h", "c.drop_details")
    out = rdpcap(str(tmp_path / "good.pcap"))
    assert [raw(p) for p in out] == [raw(frame(p)) for p in good] + [raw(frame(udp6(n=0)))]
    bad = rdpcap(str(tmp_path / "bad.pcap"))
    assert len(bad) == 5
    h = handlers(proc)
    assert h["c.drops"] == "5"
    details = h["c.drop_details"]
    for line in ["1 tiny packet", "1 bad IPv6 version", "1 bad IPv6 payload length",
                 "2 bad source address"]:
        assert line in details, details
    assert "IP6 header check failed" in proc.stderr


def test_dec_ip6_hlim(run_sluice, tmp_path):
    hlims = [64, 2, 1, 0, 255]
    pcap = write(tmp_path, "in.pcap", [frame(udp6(hlim=h, n=h % 7)) for h in hlims])
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> CheckIP6Header -> d :: DecIP6HLIM "
        "-> Unstrip(14) -> ToDump(out.pcap); d[1] -> Unstrip(14) -> ToDump(expired.pcap);",
        "-h", "d.drops")
    out = rdpcap(str(tmp_path / "out.pcap"))
    assert [p[IPv6].hlim for p in out] == [63, 1, 254]
    for p, h in zip(out, [64, 2, 255]):
        # Only the hop limit changed; the UDP checksum (which does not cover it) still holds.
        orig = udp6(hlim=h, n=h % 7)
        assert raw(p[IPv6].payload) == raw(IPv6(raw(orig)).payload)
        c = p[IPv6].copy()
        del c[UDP].chksum
        assert IPv6(raw(c))[UDP].chksum == p[UDP].chksum
    expired = rdpcap(str(tmp_path / "expired.pcap"))
    assert [p[IPv6].hlim for p in expired] == [1, 0]
    assert proc.stdout.strip() == "2"  # one -h: the value alone, as in Click


def test_ip6_encap_ipv4_in_ipv6(run_sluice, tmp_path):
    inner = [IP(src="198.18.0.1", dst=f"198.19.0.{k}") / UDP(sport=1, dport=2) / Raw(b"x" * k)
             for k in range(1, 6)]
    pcap = write(tmp_path, "in.pcap", [frame(i) for i in inner])
    run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> IP6Encap(ipip, {A}, {B}, HLIM 20, "
        f"CLASS 0xb8) -> EtherEncap(0x86dd, {MAC_A}, {MAC_B}) -> ToDump(out.pcap);")
    out = rdpcap(str(tmp_path / "out.pcap"))
    assert len(out) == len(inner)
    for p, i in zip(out, inner):
        ip6 = p[IPv6]
        assert (ip6.version, ip6.tc, ip6.fl, ip6.nh, ip6.hlim) == (6, 0xB8, 0, 4, 20)
        assert (ip6.src, ip6.dst) == (A, B)
        assert ip6.plen == len(raw(i))
        assert raw(ip6.payload) == raw(i)
        assert p[IP].dst == i.dst


def test_ip6_encap_dst_anno_and_ipv6_in_ipv6(run_sluice, tmp_path):
    inner = [udp6(dst=f"2001:db8:2::{k}", n=k) for k in range(1, 4)]
    pcap = write(tmp_path, "in.pcap", [frame(i) for i in inner])
    run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> GetIP6Address(24) "
        f"-> IP6Encap(41, {A}, DST_ANNO) -> EtherEncap(0x86dd, {MAC_A}, {MAC_B}) "
        "-> ToDump(out.pcap);")
    out = rdpcap(str(tmp_path / "out.pcap"))
    for p, i in zip(out, inner):
        assert (p[IPv6].nh, p[IPv6].hlim, p[IPv6].dst) == (41, 250, i.dst)
        assert raw(p[IPv6].payload) == raw(i)


def fragments_by_id(pkts):
    groups = {}
    for p in pkts:
        if IPv6ExtHdrFragment in p:
            groups.setdefault(p[IPv6ExtHdrFragment].id, []).append(p[IPv6])
    return groups


def test_ip6_fragmenter_fragments_reassemble(run_sluice, tmp_path):
    mtu = 1280
    big = [
        udp6(n=3000),
        udp6(n=1233),
        IPv6(src=A, dst=B) / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting(addresses=["2001:db8::9"])
        / IPv6ExtHdrDestOpt() / UDP(sport=7, dport=9) / Raw(bytes(range(256)) * 9),
        IPv6(src=A, dst=B) / ICMPv6EchoRequest(id=1, seq=2, data=b"p" * 2000),
    ]
    small = [udp6(n=1232), udp6(n=10)]
    pcap = write(tmp_path, "in.pcap", [frame(p) for p in big + small])
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> CheckIP6Header -> f :: IP6Fragmenter({mtu}) "
        f"-> EtherEncap(0x86dd, {MAC_A}, {MAC_B}) -> ToDump(out.pcap);", "-h", "f.fragments")
    out = rdpcap(str(tmp_path / "out.pcap"))
    unfragmented = [p for p in out if IPv6ExtHdrFragment not in p]
    assert [raw(p) for p in unfragmented] == [raw(frame(p)) for p in small]
    groups = fragments_by_id(out)
    assert len(groups) == len(big)
    n = 0
    for frags, orig in zip(groups.values(), big):
        n += len(frags)
        for k, f in enumerate(frags):
            assert len(raw(f)) <= mtu
            fh = f[IPv6ExtHdrFragment]
            assert fh.m == (k + 1 < len(frags))
            if fh.m:
                assert len(raw(fh.payload)) % 8 == 0
        assert raw(defragment6(frags)) == raw(IPv6(raw(orig)))
    assert proc.stdout.strip() == str(n)
    # The hop-by-hop and routing headers are in every fragment, before the fragment header.
    third = list(groups.values())[2]
    for f in third:
        assert IPv6ExtHdrHopByHop in f and IPv6ExtHdrRouting in f
        assert f[IPv6ExtHdrRouting].nh == 44


def test_check_length_too_big_to_output_1(run_sluice, tmp_path):
    pkts = [udp6(n=n) for n in (10, 1452, 1453, 1900)]
    pcap = write(tmp_path, "in.pcap", [frame(p) for p in pkts])
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> c :: CheckLength(1500) -> Unstrip(14) "
        "-> ToDump(ok.pcap); c[1] -> Unstrip(14) -> ToDump(big.pcap);"
        f"FromDump({pcap}, STOP true) -> Strip(14) -> c2 :: CheckLength(1500) -> Discard;",
        "-h", "c2.drops")
    ok = rdpcap(str(tmp_path / "ok.pcap"))
    big = rdpcap(str(tmp_path / "big.pcap"))
    assert [len(p[IPv6]) for p in ok] == [58, 1500]
    assert [len(p[IPv6]) for p in big] == [1501, 1948]
    assert proc.stdout.strip() == "2"


def click_hex(data, nbytes):
    """The CONTENTS lines as Click's IP6Print lays them out."""
    s = "  "
    for i, b in enumerate(data[:nbytes]):
        s += f"{b:02x}"
        if i % 24 == 23:
            s += "\n  "
        elif i % 4 == 3:
            s += " "
    return s


def test_ip6_print_lines(run_sluice, tmp_path):
    pkts = [
        udp6(n=5, hlim=9),
        IPv6(src="::1", dst="::ffff:198.18.0.1", hlim=1) / ICMPv6EchoRequest(),
        IPv6(src="2001:0:0:1::2", dst="fe80::1", nh=59, plen=0),
    ]
    pcap = write(tmp_path, "in.pcap", [frame(p) for p in pkts])
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> Strip(14) -> IP6Print(in) -> Discard;")
    want = [
        f"in: {A} -> {B} plen 13, next 17, hlim 9",
        "in: ::0.0.0.1 -> ::ffff:198.18.0.1 plen 8, next 58, hlim 1",
        "in: 2001:0:0:1::2 -> fe80::1 plen 0, next 59, hlim 64",
    ]
    assert proc.stderr.splitlines() == want
    # CONTENTS prints the packet's bytes from its start (here its Ethernet header).
    proc = run_sluice(
        f"FromDump({pcap}, STOP true) -> MarkIP6Header(14) "
        "-> IP6Print(x, CONTENTS true, NBYTES 30) -> IP6Print(CONTENTS true, NBYTES 24) "
        "-> Discard;")
    expect = []
    for w, p in zip(want, pkts):
        expect.append("x" + w[2:] + "\n" + click_hex(raw(frame(p)), 30))
        expect.append(w[4:] + "\n" + click_hex(raw(frame(p)), 24))
    # FromDump may hand both printers a batch at a time: compare each printer's lines.
    text = proc.stderr
    assert text.rstrip("\n").count("\n") + 1 == sum(e.count("\n") + 1 for e in expect)
    for e in expect:
        assert e + "\n" in text, e
