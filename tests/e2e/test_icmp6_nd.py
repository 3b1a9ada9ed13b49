"""End-to-end tests of ICMP6Error, ICMP6PingResponder, IP6NDAdvertiser and IP6NDSolicitor.

Frames are crafted with scapy into a pcap, Sluice runs a small configuration on them
(FromDump under --simtime, ToDump), and the output pcap is dissected with scapy: every
ICMPv6 checksum is recomputed by scapy, and the fields RFC 4443 and RFC 4861 ask for are
checked one by one. Sluice's own parsers are never used to check results.
"""
import re

from scapy.all import (IPv6, UDP, Ether, ICMPv6DestUnreach, ICMPv6EchoReply,
                       ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6NDOptDstLLAddr,
                       ICMPv6NDOptSrcLLAddr, ICMPv6PacketTooBig, ICMPv6ParamProblem,
                       ICMPv6TimeExceeded, IPerror6, Raw, raw, rdpcap, wrpcap)
from scapy.layers.inet6 import in6_chksum

R, RLL, MR = "2001:db8::1", "fe80::ff:fe00:1", "02:00:00:00:00:01"
H, HLL, MH = "2001:db8::2", "fe80::2", "02:00:00:00:00:02"
FAR = "2001:db8:9::7"
UNANSWERED = "2001:db8::3"
ENCAP = f"EtherEncap(0x86dd, {MR}, {MH})"


def handlers(proc):
    """Handler values printed by several -h options (multi-line values joined)."""
    res, name = {}, None
    for line in proc.stdout.splitlines():
        m = re.match(r"^(\S+\.\S+):$", line)
        if m:
            name = m.group(1)
            res[name] = []
        elif name is not None and line:
            res[name].append(line)
    return {k: "\n".join(v) for k, v in res.items()}


def frame(ip, t=1.0, src=MH, dst=MR):
    p = Ether(src=src, dst=dst) / ip
    p.time = t
    return p


def cksum_ok(p):
    """True if scapy computes the ICMPv6 checksum that Sluice wrote."""
    ip = p[IPv6]
    b = bytearray(raw(ip.payload))
    stored = int.from_bytes(b[2:4], "big")
    b[2:4] = b"\0\0"
    return in6_chksum(58, ip, bytes(b)) == stored


def udp6(src, dst, n, hlim=64):
    return IPv6(src=src, dst=dst, hlim=hlim) / UDP(sport=4000, dport=5000) / Raw(bytes(i % 256 for i in range(n)))


def run_pipeline(run_sluice, tmp_path, frames, middle, hs=()):
    wrpcap(str(tmp_path / "in.pcap"), frames)
    args = []
    for h in hs:
        args += ["-h", h]
    proc = run_sluice(f"FromDump({tmp_path / 'in.pcap'}, STOP true) -> {middle} "
                      f"-> ToDump({tmp_path / 'out.pcap'});", *args)
    return rdpcap(str(tmp_path / "out.pcap")), handlers(proc)


# ---------------------------------------------------------------------------------------------
# ICMP6Error


def test_icmp6_errors_quote_the_packet_and_carry_type_fields(run_sluice, tmp_path):
    small = udp6(H, FAR, 20)
    big = udp6(H, FAR, 1400)
    kinds = [
        ("unreachable, port", ICMPv6DestUnreach, 4),
        ("toobig, MTU 1400", ICMPv6PacketTooBig, 0),
        ("timeexceeded, transit", ICMPv6TimeExceeded, 0),
        ("parameterproblem, header", ICMPv6ParamProblem, 0),
    ]
    for n, (args, layer, code) in enumerate(kinds):
        d = tmp_path / f"k{n}"
        d.mkdir()
        out, _ = run_pipeline(run_sluice, d, [frame(small), frame(big)],
                              f"Strip(14) -> ICMP6Error({R}, {args}) -> {ENCAP}")
        assert len(out) == 2, args
        for e, orig in zip(out, (small, big)):
            ip = e[IPv6]
            assert (ip.src, ip.dst, ip.hlim, ip.nh) == (R, H, 255, 58)
            assert ip.tc == 0 and ip.fl == 0
            m = e[layer]
            assert m.code == code
            assert cksum_ok(e), args
            # The bytes after the 8-byte ICMPv6 header (scapy rebuilds a truncated quote).
            quoted = raw(ip)[48:]
            want = raw(orig)[:1280 - 48]
            assert quoted == want
            assert len(ip) <= 1280
            assert e[IPerror6].src == H and e[IPerror6].dst == FAR
        if layer is ICMPv6PacketTooBig:
            assert out[0][ICMPv6PacketTooBig].mtu == 1400
        if layer is ICMPv6ParamProblem:
            assert out[0][ICMPv6ParamProblem].ptr == 0
    # The big packet's error is exactly the minimum MTU.
    assert len(out[1][IPv6]) == 1280


def test_icmp6_error_is_never_sent_for_errors_or_multicast(run_sluice, tmp_path):
    frames = [
        frame(IPv6(src=H, dst=R) / ICMPv6DestUnreach() / raw(udp6(R, H, 8))),
        frame(IPv6(src=H, dst=R) / ICMPv6TimeExceeded() / raw(udp6(R, H, 8))),
        frame(udp6(H, "ff02::1", 8)),
        frame(udp6("::", R, 8)),
        frame(udp6("ff05::2", R, 8)),
        frame(IPv6(src=H, dst=R) / ICMPv6EchoRequest(id=1, seq=1)),
    ]
    out, h = run_pipeline(run_sluice, tmp_path, frames,
                          f"Strip(14) -> e :: ICMP6Error({R}, unreachable, noroute) -> {ENCAP}",
                          ["e.drops", "e.drop_details", "e.sent"])
    assert len(out) == 1
    assert out[0][ICMPv6DestUnreach].code == 0
    assert ICMPv6EchoRequest in out[0][ICMPv6DestUnreach].payload
    assert h["e.drops"] == "5"
    assert "2 ICMPv6 error" in h["e.drop_details"]
    assert "2 bad source address" in h["e.drop_details"]
    assert "1 multicast destination" in h["e.drop_details"]


def test_packet_too_big_answers_a_multicast_destination(run_sluice, tmp_path):
    out, _ = run_pipeline(run_sluice, tmp_path, [frame(udp6(H, "ff0e::101", 1452))],
                          f"Strip(14) -> ICMP6Error({R}, 2, 0, MTU 1280) -> {ENCAP}")
    (e,) = out
    assert e[ICMPv6PacketTooBig].mtu == 1280
    assert e[IPv6].dst == H and cksum_ok(e)


# ---------------------------------------------------------------------------------------------
# ICMP6PingResponder


def test_echo_requests_are_answered(run_sluice, tmp_path):
    frames = [frame(IPv6(src=H, dst=R, hlim=64) / ICMPv6EchoRequest(id=0x1234, seq=k, data=b"x" * k))
              for k in range(1, 6)]
    frames.append(frame(udp6(H, R, 8)))
    frames.append(frame(IPv6(src=H, dst="ff02::1") / ICMPv6EchoRequest(id=1, seq=1)))
    out, h = run_pipeline(run_sluice, tmp_path, frames,
                          f"Strip(14) -> p :: ICMP6PingResponder -> {ENCAP}",
                          ["p.replies", "p.drop_details"])
    assert len(out) == 5
    for k, e in enumerate(out, start=1):
        ip = e[IPv6]
        assert (ip.src, ip.dst, ip.hlim) == (R, H, 255)
        r = e[ICMPv6EchoReply]
        assert (r.id, r.seq, r.data) == (0x1234, k, b"x" * k)
        assert cksum_ok(e)
    assert h["p.replies"] == "5"
    assert "1 not an echo request" in h["p.drop_details"]
    assert "1 multicast destination" in h["p.drop_details"]


# ---------------------------------------------------------------------------------------------
# IP6NDAdvertiser


def ns(src, dst, target, sll=None, hlim=255, edst="33:33:ff:00:00:01"):
    p = IPv6(src=src, dst=dst, hlim=hlim) / ICMPv6ND_NS(tgt=target)
    if sll:
        p = p / ICMPv6NDOptSrcLLAddr(lladdr=sll)
    return frame(p, dst=edst)


def test_advertiser_answers_resolution_nud_and_dad(run_sluice, tmp_path):
    frames = [
        ns(H, "ff02::1:ff00:1", R, sll=MH),
        ns(HLL, RLL, RLL, edst=MR),
        ns("::", "ff02::1:ff00:1", R),
        ns(H, "ff02::1:ff00:1", R, sll=MH, hlim=64),
        ns(H, "ff02::1:ff00:9", "2001:db8::9", sll=MH),
    ]
    out, h = run_pipeline(run_sluice, tmp_path, frames,
                          f"adv :: IP6NDAdvertiser({R} {RLL} {MR})",
                          ["adv.replies", "adv.drop_details"])
    assert len(out) == 3
    want = [
        (MH, R, H, 1),
        (MH, RLL, HLL, 1),
        ("33:33:00:00:00:01", R, "ff02::1", 0),
    ]
    for e, (edst, src, dst, solicited) in zip(out, want):
        assert e[Ether].dst == edst and e[Ether].src == MR
        ip = e[IPv6]
        assert (ip.src, ip.dst, ip.hlim) == (src, dst, 255)
        na = e[ICMPv6ND_NA]
        assert (na.R, na.S, na.O, na.code) == (1, solicited, 1, 0)
        assert na.tgt == src
        assert e[ICMPv6NDOptDstLLAddr].lladdr == MR
        assert cksum_ok(e)
    assert h["adv.replies"] == "3"
    assert "1 hop limit not 255" in h["adv.drop_details"]
    assert "1 unknown target" in h["adv.drop_details"]


# ---------------------------------------------------------------------------------------------
# IP6NDSolicitor, with the advertiser, as on a router's interface


def test_solicitor_resolves_with_a_hosts_advertisement(run_sluice, tmp_path):
    """Packets for H and for an address nobody answers at t=1; H's advertisement at t=1.5;
    a last frame at t=9 lets the retransmission timers run."""
    data = [frame(udp6(FAR, H, k), t=1.0) for k in (1, 2, 3)]
    data.append(frame(udp6(FAR, UNANSWERED, 4), t=1.0))
    adv = frame(IPv6(src=H, dst=R, hlim=255) / ICMPv6ND_NA(tgt=H, R=0, S=1, O=1)
                / ICMPv6NDOptDstLLAddr(lladdr=MH), t=1.5)
    late = frame(udp6(FAR, H, 5), t=9.0)
    frames = data + [adv, late]
    wrpcap(str(tmp_path / "in.pcap"), frames)
    conf = f"""
        FromDump(in.pcap, STOP true, TIMING true)
          -> c :: Classifier(12/86dd 20/3a 54/88, 12/86dd);
        c[0] -> [1]nds;
        c[1] -> Strip(14) -> nds :: IP6NDSolicitor({R}, {MR}) -> ToDump(out.pcap);
    """
    proc = run_sluice(conf, "-h", "nds.drop_details", "-h", "nds.queries", "-h", "nds.table")
    h = handlers(proc)
    out = rdpcap(str(tmp_path / "out.pcap"))
    sols = [p for p in out if ICMPv6ND_NS in p]
    data_out = [p for p in out if UDP in p]
    # One solicitation for H (answered), three for the silent address.
    assert [p[ICMPv6ND_NS].tgt for p in sols] == [H, UNANSWERED, UNANSWERED, UNANSWERED]
    for s in sols:
        last = s[ICMPv6ND_NS].tgt[-1]
        ip = s[IPv6]
        assert ip.src == R and ip.hlim == 255
        assert ip.dst == f"ff02::1:ff00:{last}"
        assert s[Ether].dst == f"33:33:ff:00:00:0{last}"
        assert s[Ether].src == MR
        assert s[ICMPv6NDOptSrcLLAddr].lladdr == MR
        assert cksum_ok(s)
    assert [len(p[UDP].payload) for p in data_out] == [1, 2, 3, 5]
    for p in data_out:
        assert p[Ether].dst == MH and p[Ether].src == MR and p[Ether].type == 0x86DD
        assert p[IPv6].dst == H
    assert "1 unresolved" in h["nds.drop_details"]
    assert h["nds.queries"] == "4"
    assert h["nds.table"].startswith(f"{H} 1 02-00-00-00-00-02")
