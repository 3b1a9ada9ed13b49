"""Hostile sizes and resources: every case ends with the right result or a clear error (exit
status 1 and a message), never an abort, a panic or a signal, under a 3 GB address-space limit
(`ulimit -v 3000000`).

Covers queue capacities, packet-size arguments, the `-j` thread count, FromDump on awkward
captures, a failed output (ToDump on a full device) and IPGWOptions on malformed options
(checked against Click's elements/ip/ipgwoptions.cc). Captures are written and dissected by
scapy.
"""
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, IPOption, PcapNgWriter, Raw, rdpcap, wrpcap

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from sluice_binary import BINARY, ensure_built  # noqa: E402

# `ulimit -v 3000000` (KiB).
ADDRESS_SPACE = 3_000_000 * 1024

# Runs a command under the address-space limit and prints its peak resident memory (KiB) as
# the last line of standard error, so the test can see what a configuration costs.
MEASURE = """
import resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
r = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL)
sys.stderr.write("\\nmaxrss %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)
"""


@pytest.fixture(scope="module")
def sluice():
    ensure_built()

    def run(*args, cwd=None, timeout=120, address_space=ADDRESS_SPACE):
        """Runs sluice; checks it ended by itself (0 or 1, no signal, no panic); returns
        (returncode, stdout, stderr, peak RSS in KiB)."""
        proc = subprocess.run(
            [sys.executable, "-c", MEASURE, str(address_space), str(BINARY), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        err, _, rss = proc.stderr.rpartition("\nmaxrss ")
        assert proc.returncode in (0, 1), f"exit {proc.returncode}\n{proc.stderr}"
        assert "panicked" not in err and "memory allocation" not in err, err
        return proc.returncode, proc.stdout, err, int(rss)

    return run


def fails_with(run, conf, message, *args):
    code, _, err, _ = run("check", "-e", conf, *args)
    assert code == 1, err
    assert message in err, err
    code, _, err, _ = run("-e", conf, *args)
    assert code == 1 and message in err, err


# ---- queues ---------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", ["ThreadSafeQueue", "CPUQueue"])
@pytest.mark.parametrize("capacity", ["4294967295", "100000000", "16777217"])
def test_queue_capacity_past_the_maximum_is_a_configuration_error(sluice, cls, capacity):
    fails_with(
        sluice,
        f"Idle -> {cls}({capacity}) -> Unqueue -> Discard",
        "CAPACITY: out of range, bound 16777216",
    )


@pytest.mark.parametrize("cls", ["ThreadSafeQueue", "CPUQueue"])
def test_largest_queue_runs_and_costs_memory_only_as_it_fills(sluice, cls):
    code, out, err, rss = sluice(
        "-j", "2", "-e",
        f"s :: InfiniteSource(LIMIT 1000, STOP true) -> q :: {cls}(16777216) -> Discard;"
        " StaticThreadSched(s 1)",
        "-h", "q.capacity",
    )
    assert code == 0, err
    assert out.strip() == "16777216"
    # Its slots take 256 MiB (per ring) of address space; far less is resident.
    assert rss < 150_000, rss


# ---- packet sizes ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "conf,message",
    [
        ("InfiniteSource(LENGTH 4294967295) -> Discard", "LENGTH: out of range, bound 262144"),
        ("RatedSource(LENGTH 4294967295) -> Discard", "LENGTH: out of range, bound 262144"),
        ("Idle -> Pad(4000000000) -> Discard", "LENGTH: out of range, bound 262144"),
        ("Idle -> Resize(0, 4000000000) -> Discard", "TAIL: out of range, bound 262144"),
        ("Idle -> Resize(-4000000000) -> Discard", "HEAD: out of range, bound -262144"),
        ("Idle -> Unstrip(4294967295) -> Discard", "LENGTH: out of range, bound 262144"),
        ("Idle -> Strip(99999999999) -> Discard", "LENGTH: out of range, bound 262144"),
        ("InfiniteSource(BURST 0) -> Discard", "burst size must be >= 1"),
    ],
)
def test_oversized_packet_arguments_are_refused(sluice, conf, message):
    fails_with(sluice, conf, message)


def test_largest_packet_length_runs(sluice):
    code, out, err, _ = sluice(
        "-e",
        "InfiniteSource(LENGTH 262144, LIMIT 10, STOP true) -> Unstrip(262144) -> c :: Counter -> Discard",
        "-h", "c.byte_count",
    )
    assert code == 0, err
    assert out.strip() == str(10 * 2 * 262144)


@pytest.mark.parametrize("cls", ["InfiniteSource", "RatedSource"])
def test_length_handler_is_bounded_too(sluice, cls):
    code, out, err, _ = sluice(
        "-e",
        f"s :: {cls}(LENGTH 60, LIMIT 3, STOP true) -> Discard;"
        " Script(write s.length 4294967295)",
        "-h", "s.length",
    )
    assert "out of range, bound 262144" in err, err
    assert out.strip() == "60"


def test_synthetic_load_short_of_memory_is_a_configuration_error(sluice):
    # Two 512 MiB working sets in 700 MB of address space: the second cannot be had.
    code, _, err, _ = sluice(
        "-e",
        "InfiniteSource(LIMIT 10, STOP true) -> SyntheticLoad(1, 512M) -> SyntheticLoad(1, 512M) -> Discard",
        address_space=700_000 * 1024,
    )
    assert code == 1
    assert "S: out of memory" in err, err


# ---- threads --------------------------------------------------------------------------------

def test_thread_count_is_capped(sluice):
    code, _, err, _ = sluice("-j", "100000", "-e", "Idle -> Discard")
    assert code == 1
    assert "at most 256" in err, err
    code, out, err, _ = sluice(
        "-j", "256", "-e", "InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> Discard",
        "-h", "c.count",
    )
    assert code == 0, err
    assert out.strip() == "5"


def test_sharing_error_suggests_a_thread_safe_queue(sluice):
    code, _, err, _ = sluice(
        "-j", "2", "-e",
        "a :: InfiniteSource -> q :: FrontDropQueue -> u :: Unqueue -> Discard;"
        " StaticThreadSched(a 0, u 1)",
    )
    assert code == 1
    assert "'q :: FrontDropQueue' cannot be shared" in err and "ThreadSafeQueue" in err, err


# ---- FromDump and ToDump --------------------------------------------------------------------

def udp_frames(n, size=100):
    return [
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        / IP(src="198.18.0.1", dst="198.19.0.2", id=i)
        / UDP(sport=1000 + i, dport=9)
        / Raw(bytes([i]) * size)
        for i in range(n)
    ]


def test_from_dump_reads_packets_older_than_the_first(sluice, tmp_path):
    pkts = udp_frames(4)
    for p, t in zip(pkts, [10, 5, 20, 3]):
        p.time = t
    wrpcap(str(tmp_path / "in.pcap"), pkts)
    code, out, err, _ = sluice(
        "-e", "fd :: FromDump(in.pcap, STOP true) -> ToDump(out.pcap, SNAPLEN 0, USE_ENCAP_FROM fd)",
        "-h", "fd.count", "-h", "fd.skipped", cwd=tmp_path,
    )
    assert code == 0, err
    assert out.split() == ["fd.count:", "4", "fd.skipped:", "0"]
    back = rdpcap(str(tmp_path / "out.pcap"))
    assert [int(p.time) for p in back] == [10, 5, 20, 3]
    assert [p[IP].id for p in back] == [0, 1, 2, 3]


def test_from_dump_reads_records_longer_than_the_snaplen(sluice, tmp_path):
    pkts = udp_frames(10, size=200)
    wrpcap(str(tmp_path / "in.pcap"), pkts, snaplen=64)
    # tcpdump reads the file too (the independent check that it is a valid capture).
    td = subprocess.run(["tcpdump", "-nr", str(tmp_path / "in.pcap")], capture_output=True, text=True)
    if td.returncode == 0:
        assert len(td.stdout.splitlines()) == 10
    code, out, err, _ = sluice(
        "-e", "fd :: FromDump(in.pcap, STOP true) -> ToDump(out.pcap, SNAPLEN 0, USE_ENCAP_FROM fd)",
        "-h", "fd.count", cwd=tmp_path,
    )
    assert code == 0, err
    assert out.strip() == "10"
    back = rdpcap(str(tmp_path / "out.pcap"))
    assert [bytes(p) for p in back] == [bytes(p) for p in pkts]


def test_from_dump_names_a_pcapng_file(sluice, tmp_path):
    w = PcapNgWriter(str(tmp_path / "in.pcapng"))
    for p in udp_frames(2):
        w.write(p)
    w.close()
    code, _, err, _ = sluice("-e", "FromDump(in.pcapng, STOP true) -> Discard", cwd=tmp_path)
    assert code == 1
    assert "in.pcapng" in err and "pcapng file" in err, err


def test_from_dump_refuses_a_huge_record_without_allocating_it(sluice, tmp_path):
    wrpcap(str(tmp_path / "in.pcap"), udp_frames(3))
    data = bytearray((tmp_path / "in.pcap").read_bytes())
    first = 24 + 16 + len(udp_frames(1)[0])
    data[first + 8:first + 12] = (0xFFFFFFF0).to_bytes(4, "little")
    (tmp_path / "in.pcap").write_bytes(bytes(data))
    code, out, err, _ = sluice(
        "-e", "fd :: FromDump(in.pcap, STOP true) -> Discard", "-h", "fd.count", "-h", "fd.errors",
        cwd=tmp_path,
    )
    assert code == 0, err
    assert out.split() == ["fd.count:", "1", "fd.errors:", "1"]
    assert "256 KiB" in err, err


def test_a_failed_output_fails_the_run(sluice):
    code, _, err, _ = sluice("-e", "InfiniteSource(LIMIT 100, STOP true) -> ToDump(/dev/full)")
    assert code == 1
    assert "/dev/full" in err and "No space left" in err, err
    code, _, err, _ = sluice("-e", "InfiniteSource(LIMIT 100, STOP true) -> ToDump(/dev/null)")
    assert code == 0, err


# ---- IPGWOptions ----------------------------------------------------------------------------

ME = "198.18.0.1"


def opt_packet(i, option):
    """A raw IP packet (id i) carrying `option` (raw bytes, padded to a 4-byte multiple)."""
    option += b"\x00" * (-len(option) % 4)
    return IP(src="198.18.0.2", dst="198.19.0.9", id=i, options=[IPOption(option)]) / UDP(dport=9)


# (option bytes, expected output, check of the forwarded option or None)
CASES = [
    # Record Route, pointer 0: Click rejects it (pointer before the first slot).
    (bytes([7, 7, 0, 0, 0, 0, 0]), 1, None),
    # Record Route with room: MYADDR recorded.
    (bytes([7, 7, 4, 0, 0, 0, 0]), 0, lambda o: o.pointer == 8 and o.routers == [ME]),
    # Record Route full (pointer just past the end): forwarded unchanged.
    (bytes([7, 7, 8, 9, 9, 9, 9]), 0, lambda o: o.pointer == 8 and o.routers == ["9.9.9.9"]),
    # Timestamp flag 0, full (pointer past the end): the overflow counter goes 2 -> 3.
    (bytes([68, 12, 13, 0x20]) + bytes(8), 0, lambda o: o.oflw == 3 and o.pointer == 13),
    # Timestamp flag 1, pointer far past the end: overflow too.
    (bytes([68, 12, 45, 0x01]) + bytes(8), 0, lambda o: o.oflw == 1 and o.pointer == 45),
    # Timestamp with the overflow counter already at 15: error.
    (bytes([68, 12, 13, 0xF0]) + bytes(8), 1, None),
    # Timestamp flag 3 (prespecified) with the pointer near the end: error.
    (bytes([68, 12, 9, 0x03, 198, 18, 0, 1, 0, 0, 0, 0]), 1, None),
    # Timestamp pointer 4 (before the first slot): error.
    (bytes([68, 12, 4, 0x00]) + bytes(8), 1, None),
]


def test_ip_gw_options_follow_click_on_malformed_options(sluice, tmp_path):
    wrpcap(str(tmp_path / "in.pcap"), [opt_packet(i, o) for i, (o, _, _) in enumerate(CASES)],
           linktype=101)
    code, out, err, _ = sluice(
        "-e",
        f"FromDump(in.pcap, STOP true) -> gw :: IPGWOptions({ME}) -> ToDump(ok.pcap, ENCAP IP, SNAPLEN 0);"
        " gw[1] -> ToDump(bad.pcap, ENCAP IP, SNAPLEN 0)",
        "-h", "gw.drops", cwd=tmp_path,
    )
    assert code == 0, err
    ok = {p[IP].id: p for p in rdpcap(str(tmp_path / "ok.pcap"))}
    bad = {p[IP].id: p for p in rdpcap(str(tmp_path / "bad.pcap"))}
    for i, (_, port, check) in enumerate(CASES):
        assert i in (bad if port else ok), f"case {i} should leave on output {port}"
        if check:
            p = ok[i]
            assert check(p[IP].options[0]), (i, p[IP].options[0].fields)
            # The header checksum is valid after the update.
            fresh = p[IP].copy()
            del fresh.chksum
            assert IP(bytes(fresh)).chksum == p[IP].chksum
    assert out.strip() == str(sum(port for _, port, _ in CASES))
