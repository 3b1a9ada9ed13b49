"""End-to-end tests of standard elements through the `sluice` binary: Print's stderr format,
timed sources on simulated time, and handlers read with -h.

Packet bytes are crafted with scapy (an independent implementation) and compared with what
Print writes.
"""
import re

from scapy.all import IP, UDP, Ether, raw


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
    assert print_lines(proc.stderr, "asc") == [f"asc: {len(pkt):4d} | {shown}"]
    (line,) = print_lines(proc.stderr, "none")
    assert re.fullmatch(r"none: \d+\.\d{9}: +%d" % len(pkt), line), line


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
