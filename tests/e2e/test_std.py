"""End-to-end tests of standard elements through the `sluice` binary: Print's stderr format,
timed sources on simulated time, and handlers read with -h.

Packet bytes are crafted with scapy (an independent implementation) and compared with what
Print writes.
"""
import re

import os
import shutil
import subprocess

import pytest
from scapy.all import ICMP, IP, UDP, Dot1Q, Ether, rdpcap, raw, wrpcap


def hexgroups(data):
    h = data.hex()
    return " ".join(h[i:i + 8] for i in range(0, len(h), 8))


def click_data(data):
    """Bytes as a configuration string literal: \\<hex>."""
    return '"\\<' + data.hex() + '>"'


def print_lines(stderr, label):
    return [l for l in stderr.splitlines() if l.startswith(label + ":")]


def test_print_default_format_matches_click(run_sluice):
    pkt = raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
              / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=1234, dport=5678) / b"hello")
    conf = f"InfiniteSource({click_data(pkt)}, LIMIT 3, STOP true) -> Print(ok) -> Discard;"
    proc = run_sluice(conf)
    lines = print_lines(proc.stderr, "ok")
    assert len(lines) == 3, proc.stderr
    expected = f"ok: {len(pkt):4d} | {hexgroups(pkt[:24])}"
    assert lines[0] == expected


def test_print_maxlength_contents_and_timestamp(run_sluice):
    pkt = raw(IP(src="198.18.0.1", dst="198.18.0.2") / UDP() / b"ABCDEFGH")
    conf = (
        f"s :: InfiniteSource({click_data(pkt)}, LIMIT 1, STOP true) -> t :: Tee;"
        f"t[0] -> Print(all, -1) -> Discard;"
        f"t[1] -> Print(asc, 4, CONTENTS ASCII) -> Print(none, CONTENTS NONE, TIMESTAMP true) -> Discard;"
    )
    proc = run_sluice(conf)
    assert print_lines(proc.stderr, "all") == [f"all: {len(pkt):4d} | {hexgroups(pkt)}"]
    shown = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in pkt[:4])
    assert print_lines(proc.stderr, "asc") == [f"asc: {len(pkt):4d} |  {shown}"]
    (line,) = print_lines(proc.stderr, "none")
    assert re.fullmatch(r"none: \d+\.(\d{6}|\d{9}): +%d" % len(pkt), line), line


def test_rated_source_simtime_and_handlers(run_sluice):
    conf = "RatedSource(RATE 100, LIMIT 500, STOP true) -> c :: Counter -> a :: AverageCounter -> Discard;"
    proc = run_sluice(conf, "-h", "c.count", "-h", "a.rate")
    out = proc.stdout
    assert "500" in out, out
    assert re.search(r"\b(99|100|101)\b", out), out


def test_switch_output_counts(run_sluice):
    conf = (
        "src :: InfiniteSource(LIMIT 10, STOP true) -> sw :: Switch(1);"
        "sw[0] -> c0 :: Counter -> Discard; sw[1] -> c1 :: Counter -> Discard;"
    )
    proc = run_sluice(conf, "-h", "c0.count", "-h", "c1.count")
    assert re.search(r"c0\.count:\s*0\s", proc.stdout), proc.stdout
    assert re.search(r"c1\.count:\s*10\s", proc.stdout), proc.stdout


def test_print_ascii_groups_of_eight_and_options(run_sluice):
    data = b"Hello, world! \x00\x01 tail"
    conf = (
        f"InfiniteSource({click_data(data)}, LIMIT 1, STOP true)"
        " -> Print(a, -1, CONTENTS ASCII) -> Print(n, CONTENTS false) -> Print(CONTENTS true, MAXLENGTH 3)"
        " -> Print(h, 2, HEADROOM true) -> Print(l, LENGTH 1) -> Discard;"
    )
    lines = run_sluice(conf).stderr.splitlines()
    groups = " ".join(
        "".join(chr(b) if 32 <= b <= 126 else "." for b in data[i:i + 8]) for i in range(0, len(data), 8)
    )
    assert lines[0] == f"a: {len(data):4d} |  {groups}"
    assert lines[1] == f"n: {len(data):4d}"
    assert lines[2] == f"{len(data):4d} | {data[:3].hex()}"
    assert re.fullmatch(r"h: +%d \(h\d+ t\d+\) \| %s" % (len(data), data[:2].hex()), lines[3]), lines[3]
    assert lines[4] == f"l: {len(data):4d} | {data[:1].hex()}"


def test_stride_sched_matches_click_recorded_order(run_sluice):
    conf = (
        "i1 :: InfiniteSource(\\<11>, LIMIT 10); i2 :: InfiniteSource(\\<22>, LIMIT 10);"
        "i3 :: InfiniteSource(\\<33>, LIMIT 10, STOP true); ss :: StrideSched(4, 2, 1);"
        "i1 -> [0] ss; i2 -> [1]ss; i3 -> [2]ss; ss -> Print -> Discard"
    )
    got = [l.split("|")[1].strip() for l in run_sluice(conf).stderr.splitlines()]
    # test/standard/StrideSched-01.clicktest, Click's expected output
    want = ("11 11 22 11 11 22 33 11 11 22 11 11 22 33 11 11 22 22 33 22 22 33 22 22 33 "
            "33 33 33 33 33").split()
    assert got == want


def _vlan_run(run_sluice, tmp_path, pkts, chain):
    wrpcap(str(tmp_path / "in.pcap"), pkts)
    run_sluice(f"FromDump(in.pcap, STOP true) -> {chain} -> ToDump(out.pcap);")
    return rdpcap(str(tmp_path / "out.pcap"))


def test_vlan_encap_tags_as_scapy_reads_them(run_sluice, tmp_path):
    pkts = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=1000 + i, dport=53) / (b"x" * i)
            for i in range(4)]
    out = _vlan_run(run_sluice, tmp_path, pkts, "VLANEncap(VLAN_ID 10, VLAN_PCP 5)")
    assert len(out) == 4
    for p, o in zip(pkts, out):
        assert o[Ether].type == 0x8100
        assert o[Dot1Q].vlan == 10 and o[Dot1Q].prio == 5 and o[Dot1Q].type == 0x0800
        assert o[Ether].src == p[Ether].src and o[Ether].dst == p[Ether].dst
        assert raw(o[Dot1Q].payload) == raw(p[IP])


def test_ether_vlan_encap_builds_a_qinq_free_8021q_header(run_sluice, tmp_path):
    pkts = [IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=7, dport=9) / b"payload"]
    wrpcap(str(tmp_path / "in.pcap"), pkts, linktype=101)
    run_sluice("FromDump(in.pcap, STOP true) -> EtherVLANEncap(0x0800, 02:00:00:00:00:01,"
               " 02:00:00:00:00:02, VLAN_ID 42, VLAN_PCP 1) -> ToDump(out.pcap);")
    (o,) = rdpcap(str(tmp_path / "out.pcap"))
    assert o[Ether].src == "02:00:00:00:00:01" and o[Ether].dst == "02:00:00:00:00:02"
    assert o[Dot1Q].vlan == 42 and o[Dot1Q].prio == 1
    assert raw(o[Dot1Q].payload) == raw(pkts[0])


def test_vlan_decap_and_strip_undo_scapy_tags(run_sluice, tmp_path):
    inner = IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=5, dport=6) / b"data"
    tagged = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(vlan=77, prio=2) / inner
    plain = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / inner
    (o1, o2) = _vlan_run(run_sluice, tmp_path, [tagged, plain], "VLANDecap")
    assert Dot1Q not in o1 and o1[Ether].type == 0x0800 and raw(o1[IP]) == raw(inner)
    assert raw(o2) == raw(plain)
    # StripEtherVLANHeader, then re-tag from the annotation it set: the tag survives.
    out = _vlan_run(run_sluice, tmp_path, [tagged],
                    "StripEtherVLANHeader -> EtherVLANEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2, ANNO)")
    assert out[0][Dot1Q].vlan == 77 and out[0][Dot1Q].prio == 2
    assert raw(out[0][Dot1Q].payload) == raw(inner)


needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or not os.path.exists("/dev/net/tun"),
    reason="needs root, iproute2 and /dev/net/tun")


@needs_root
def test_from_host_to_host_answer_host_pings(sluice_bin, tmp_path):
    """Click's user-level FromHost/ToHost pair: the host pings an address behind the TAP."""
    ns = f"sl-std-{os.getpid()}"
    conf = tmp_path / "host.click"
    conf.write_text(
        "th :: ToHost(fh0);"
        "FromHost(fh0, 198.18.5.1/24, ETHER 02:00:00:00:00:05)"
        " -> c :: Classifier(12/0806 20/0001, 12/0800, -);"
        "c[0] -> ARPResponder(198.18.5.2 02:00:00:00:00:06) -> th;"
        "c[1] -> Strip(14) -> CheckIPHeader -> ICMPPingResponder"
        " -> EtherEncap(0x0800, 02:00:00:00:00:06, 02:00:00:00:00:05) -> th;"
        "c[2] -> Discard;"
        "Script(wait 4s, stop);"
    )
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        router = subprocess.Popen(["ip", "netns", "exec", ns, str(sluice_bin), "-f", str(conf),
                                   "-h", "th.count"], stdout=subprocess.PIPE, text=True)
        ping = None
        for _ in range(20):
            ping = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2",
                                   "-W", "1", "198.18.5.2"], capture_output=True, text=True)
            if ping.returncode == 0:
                break
        out, _ = router.communicate(timeout=30)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        assert int(out.split()[-1]) >= 4, out
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


@needs_root
def test_to_host_own_tap_reaches_the_host_stack(sluice_bin, tmp_path):
    """Kernel-style ToHost without FromHost: frames enter the host through an own TAP."""
    ns = f"sl-std2-{os.getpid()}"
    echo = raw(Ether(src="02:00:00:00:00:09", dst="02:00:00:00:00:0a")
               / IP(src="198.18.6.9", dst="198.18.6.1") / ICMP(id=1, seq=1))
    conf = tmp_path / "th.click"
    conf.write_text(f"InfiniteSource({click_data(echo)}, LIMIT 3, STOP true) -> th :: ToHost;")
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        sh = ("ip link set lo up; ip addr add 198.18.6.1/32 dev lo;"
              "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0;"
              f"{sluice_bin} -f {conf} -h th.count -h th.dev_name; sleep 0.3;"
              "grep '^Icmp:' /proc/net/snmp | tail -1")
        out = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", sh],
                             capture_output=True, text=True, timeout=30).stdout
        assert re.search(r"th\.count:\s*3\b", out), out
        assert "tohost0" in out, out
        icmp = out.strip().splitlines()[-1].split()
        # Icmp: InMsgs InErrors InCsumErrors InDestUnreachs InTimeExcds InParmProbs InSrcQuenchs
        # InRedirects InEchos ...
        assert int(icmp[9]) == 3, out
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
