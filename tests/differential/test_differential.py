"""Differential tests: Sluice's outputs compared byte for byte with Click 2.1's, recorded
once by record.py (the Click commit is in expected/CLICK_COMMIT). Each case (cases.py) runs
the same command line on the same committed inputs; every output is its own test: the
files written (pcaps), standard output (handler values), standard error, exit status.

Where Sluice is known to differ, the comparison is marked xfail with the reason (strict: it
fails once Sluice matches, so the mark goes away with the fix).
"""
import shutil
import subprocess
from pathlib import Path

import pytest

from cases import CASES

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"

# (case, output) -> why Sluice differs from Click there.
_PCAP_TIME = ("ToDump: Click writes nanosecond pcaps (magic a1b23c4d), Sluice microsecond ones; "
              "packets made by the router carry Click's now() (simulated time starts at "
              "1000000000 in Click, 946684800 in Sluice)")
_ICMP = ("ICMPError: Click's errors leave with TTL 200 (199 after DecIPTTL), IP IDs from one "
         "counter shared by every ICMPError, the offending datagram quoted up to 576 bytes, "
         "no next-hop MTU in needfrag; PaintTee: Click pushes the redirect copy (output 1) "
         "before the original")
KNOWN_DIFFERENCES = {
    ("iprouter", "stdout"): ("ARPQuerier: a packet still waiting for ARP when the run stops is "
                             "counted in Sluice's drops ('unresolved at stop'); Click frees it "
                             "uncounted"),
    ("iprouter", "stderr"): ("Click prints the first drop of CheckIPHeader, IPFragmenter (DF), "
                             "DropBroadcasts and the route lookup (no route); Sluice prints none"),
    ("iprouter", "eth0-out.pcap"): _PCAP_TIME + "; " + _ICMP,
    ("iprouter", "eth1-out.pcap"): _PCAP_TIME,
    ("iprouter", "host.pcap"): _PCAP_TIME,
}
# Outputs whose packets (bytes and order, timestamps aside) differ from Click's.
KNOWN_PACKET_DIFFERENCES = {("iprouter", "eth0-out.pcap"): _ICMP}


@pytest.fixture(scope="module")
def results(sluice_bin, tmp_path_factory):
    """Runs every case once; maps case name to (directory, CompletedProcess)."""
    out = {}
    for name, case in CASES.items():
        d = tmp_path_factory.mktemp(name)
        for f in (HERE / "cases" / case["dir"]).iterdir():
            shutil.copy(f, d)
        proc = subprocess.run([str(sluice_bin), *case["args"]], cwd=d, capture_output=True,
                              timeout=120)
        out[name] = (d, proc)
    return out


def _params():
    for name, case in CASES.items():
        for what in ["stdout", "stderr", "status", *case["outputs"]]:
            marks = []
            if (name, what) in KNOWN_DIFFERENCES:
                marks.append(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[(name, what)],
                                               strict=True))
            yield pytest.param(name, what, id=f"{name}-{what}", marks=marks)


@pytest.mark.parametrize("name,what", list(_params()))
def test_same_as_click(results, name, what):
    d, proc = results[name]
    want = (EXPECTED / name / what).read_bytes()
    if what == "stdout":
        got = proc.stdout
    elif what == "stderr":
        got = proc.stderr
    elif what == "status":
        got = f"{proc.returncode}\n".encode()
    else:
        path = d / what
        assert path.exists(), f"{what} was not written; stderr:\n{proc.stderr.decode()}"
        got = path.read_bytes()
    if got != want:
        detail = ""
        if what in ("stdout", "stderr", "status"):
            detail = f"\nClick:\n{want.decode(errors='replace')}\nSluice:\n{got.decode(errors='replace')}"
        else:
            detail = f"\n{_pcap_diff(want, got)}"
        pytest.fail(f"{name}: {what} differs from Click's{detail}")


def _pcap_params():
    for name, case in CASES.items():
        for what in case["outputs"]:
            marks = []
            if (name, what) in KNOWN_PACKET_DIFFERENCES:
                marks.append(pytest.mark.xfail(reason=KNOWN_PACKET_DIFFERENCES[(name, what)],
                                               strict=True))
            yield pytest.param(name, what, id=f"{name}-{what}", marks=marks)


@pytest.mark.parametrize("name,what", list(_pcap_params()))
def test_same_packets_as_click(results, name, what):
    """The packets of each pcap, in order, byte for byte (their timestamps aside: the
    byte-for-byte file comparison above checks those)."""
    d, proc = results[name]
    want = [r[2] for r in _records((EXPECTED / name / what).read_bytes())]
    path = d / what
    assert path.exists(), f"{what} was not written; stderr:\n{proc.stderr.decode()}"
    got = [r[2] for r in _records(path.read_bytes())]
    if got != want:
        pytest.fail(f"{name}: {what}: packets differ from Click's\n"
                    f"{_pcap_diff((EXPECTED / name / what).read_bytes(), path.read_bytes())}")


def _records(data):
    """(timestamp seconds, fraction, bytes) of each record of a little-endian pcap (the
    fraction in microseconds or nanoseconds, as the file has it)."""
    recs, off = [], 24
    while off + 16 <= len(data):
        sec, usec, caplen, _ = (int.from_bytes(data[off + 4 * i:off + 4 * i + 4], "little")
                                for i in range(4))
        recs.append((sec, usec, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return recs


def _pcap_diff(want, got):
    """The first records that differ, for the failure message."""
    a, b = _records(want), _records(got)
    lines = [f"Click wrote {len(a)} packets, Sluice {len(b)}"]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            lines.append(f"packet {i}: Click {x[0]}+{x[1]} {x[2].hex()}")
            lines.append(f"packet {i}: Sluice {y[0]}+{y[1]} {y[2].hex()}")
            if len(lines) > 7:
                break
    return "\n".join(lines)
