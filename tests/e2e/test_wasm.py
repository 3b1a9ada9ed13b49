"""End-to-end tests of WasmElement: user extensions in WebAssembly on pcap files.

scapy crafts a capture of IPv4/UDP frames with assorted TOS and TTL values; `sluice` runs a
configuration with an example module of `extensions/` (compiled from its text at load) and
scapy dissects the output: the DSCP rewritten with a valid header checksum and nothing else
changed (mark_dscp.wat), packets sorted by TTL (ttl_filter.wat). Hostile modules (an endless
loop, an out-of-bounds write) are contained: their packets are dropped and counted, the
element is disabled after MAX_FAULTS, and the router forwards on and exits cleanly.
"""
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, Raw, rdpcap, wrpcap
from sluice_output import parse_handlers

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "extensions"

TOS = [0x00, 0x01, 0x02, 0x03, 0xB8, 0x2A, 0xFC, 0xFF]
N = 40


def traffic():
    """N frames: TOS cycling through TOS, TTL 1..N, sizes from 60 to 1500 bytes."""
    pkts = []
    for i in range(N):
        size = 60 + (i * 37) % 1440
        p = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / \
            IP(src="198.18.0.1", dst="198.19.0.1", tos=TOS[i % len(TOS)], ttl=i + 1, id=i + 1) / \
            UDP(sport=1000 + i, dport=2000)
        p = p / Raw(bytes((i + k) & 0xFF for k in range(max(0, size - len(p)))))
        p.time = 1.0 + i / 1000
        pkts.append(Ether(bytes(p)))
    return pkts


def dropped(details, reason):
    """The count of `reason` in a drop_details text."""
    for line in details.splitlines():
        count, _, name = line.strip().partition(" ")
        if name == reason:
            return int(count)
    raise AssertionError(f"no {reason!r} in {details!r}")


@pytest.fixture
def capture(tmp_path):
    pkts = traffic()
    wrpcap(str(tmp_path / "in.pcap"), pkts)
    return pkts, tmp_path


def checksum_ok(ip):
    fresh = ip.copy()
    del fresh.chksum
    return IP(bytes(fresh)).chksum == ip.chksum


def test_mark_dscp_rewrites_dscp_with_a_valid_checksum(run_sluice, capture):
    pkts, d = capture
    proc = run_sluice(
        f'FromDump("{d / "in.pcap"}", STOP true) -> Strip(14) -> MarkIPHeader\n'
        f'  -> w :: WasmElement("{EXT / "mark_dscp.wat"}", PARAM 46)\n'
        f'  -> Unstrip(14) -> ToDump("{d / "out.pcap"}");\n',
        "-h", "w.count", "-h", "w.faults", "-h", "w.drops",
    )
    h = parse_handlers(proc.stdout)
    assert (h["w.count"], h["w.faults"], h["w.drops"]) == (str(N), "0", "0")
    out = rdpcap(str(d / "out.pcap"))
    assert len(out) == N
    for before, after in zip(pkts, out):
        ip, ip0 = after[IP], before[IP]
        assert ip.tos == (46 << 2) | (ip0.tos & 3), f"id {ip0.id}"
        assert checksum_ok(ip), f"id {ip0.id}: checksum {ip.chksum:#x}"
        # Nothing else changed: the frame equals the input with TOS and checksum replaced.
        expect = before.copy()
        expect[IP].tos = ip.tos
        expect[IP].chksum = ip.chksum
        assert bytes(after) == bytes(expect)
        assert after[UDP].dport == 2000


def test_ttl_filter_sorts_low_ttls_to_output_1(run_sluice, capture):
    _, d = capture
    run_sluice(
        f'FromDump("{d / "in.pcap"}", STOP true) -> Strip(14) -> MarkIPHeader\n'
        f'  -> w :: WasmElement("{EXT / "ttl_filter.wat"}", PARAM 10, MODE packet);\n'
        f'w[0] -> Unstrip(14) -> ToDump("{d / "high.pcap"}");\n'
        f'w[1] -> Unstrip(14) -> ToDump("{d / "low.pcap"}");\n'
    )
    high = rdpcap(str(d / "high.pcap"))
    low = rdpcap(str(d / "low.pcap"))
    assert [p[IP].ttl for p in low] == list(range(1, 10))
    assert [p[IP].ttl for p in high] == list(range(10, N + 1))
    assert all(checksum_ok(p[IP]) for p in high + low)


def test_an_endless_loop_is_contained_and_the_router_forwards_on(run_sluice, capture):
    _, d = capture
    proc = run_sluice(
        f'FromDump("{d / "in.pcap"}", STOP true)\n'
        f'  -> w :: WasmElement("{EXT / "loop_forever.wat"}", MODE packet, FUEL 10000,\n'
        f'                      MAX_FAULTS 3, DISABLED pass)\n'
        f'  -> ToDump("{d / "out.pcap"}");\n',
        "-h", "w.faults", "-h", "w.disabled", "-h", "w.drop_details", "-h", "w.last_fault",
    )
    h = parse_handlers(proc.stdout)
    assert (h["w.faults"], h["w.disabled"]) == ("3", "1")
    assert dropped(h["w.drop_details"], "out of fuel") == 3
    assert "fuel" in h["w.last_fault"]
    out = rdpcap(str(d / "out.pcap"))
    # The first three packets were lost to the faults; the rest passed unchanged.
    assert [p[IP].id for p in out] == list(range(4, N + 1))


def test_an_out_of_bounds_write_is_contained(run_sluice, capture):
    _, d = capture
    proc = run_sluice(
        f'FromDump("{d / "in.pcap"}", STOP true)\n'
        f'  -> w :: WasmElement("{EXT / "oob_write.wat"}", MAX_FAULTS 2)\n'
        f'  -> c :: Counter -> Discard;\n',
        "-h", "w.count", "-h", "w.faults", "-h", "w.drop_details", "-h", "c.count",
    )
    h = parse_handlers(proc.stdout)
    assert (h["w.count"], h["w.faults"], h["c.count"]) == (str(N), "2", "0")
    lost = dropped(h["w.drop_details"], "out-of-bounds access")
    assert lost > 0
    assert lost + dropped(h["w.drop_details"], "extension disabled") == N
