"""End-to-end test of conf/diffserv-edge.click: a DiffServ edge router on pcap files.

A scapy-crafted capture of mixed traffic (voice to UDP port 5004 = EF, a customer prefix =
AF, the rest = best effort) goes through the configuration under --simtime with FromDump
TIMING, so the meters see the capture's rates. The output capture is dissected with scapy:
DSCP marks per class, expedited packets ahead of the others, valid header checksums, and
every packet accounted for (sent, or counted by the element that dropped it).
"""
import itertools
import subprocess
from pathlib import Path

import pytest
from scapy.all import IP, TCP, UDP, Ether, Raw, rdpcap, wrpcap
from sluice_output import parse_handlers

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "diffserv-edge.click"

SRC_MAC, DST_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
VOICE = "198.18.0.10"      # EF: UDP to port 5004
GOLD = "198.18.0.40"       # AF: inside 198.18.0.32/27
OTHER = "198.18.0.100"     # best effort
SERVER = "198.19.0.1"

DROP_HANDLERS = ["chk.drops", "ef_excess.count", "red.drops", "ef_q.drops", "af_q.drops",
                 "be_q.drops"]
QUEUED = ["ef_q.length", "af_q.length", "be_q.length"]


IP_IDS = itertools.count(1)


def frame(ip, t, size):
    """An Ethernet frame of `size` bytes holding `ip`, timestamped `t`, its IP id unique."""
    ip.id = next(IP_IDS)
    p = Ether(src=SRC_MAC, dst=DST_MAC) / ip
    pad = size - len(p)
    if pad > 0:
        p = p / Raw(b"\x00" * pad)
    p.time = t
    return p


def ef(t, size=200):
    return frame(IP(src=VOICE, dst=SERVER, tos=0) / UDP(sport=7000, dport=5004), t, size)


def af(t, size=500):
    return frame(IP(src=GOLD, dst=SERVER, tos=0) / TCP(sport=40000, dport=80, flags="A"), t, size)


def be(t, size=300, tos=0xB8):
    # Best effort arrives claiming EF's code point: the edge re-marks it 0.
    return frame(IP(src=OTHER, dst=SERVER, tos=tos) / UDP(sport=9000, dport=9000), t, size)


def ms(n):
    return 1.0 + n / 1000.0


def traffic():
    """The capture, in time order, and the IP ids of the phases the tests look at."""
    pkts, phase = [], {}
    # Phase 1 (0-200 ms): every class well within its profile.
    for k in range(0, 200):
        if k % 20 == 0:
            pkts.append(ef(ms(k)))
        if k % 10 == 0:
            pkts.append(af(ms(k)))
        if k % 5 == 0:
            pkts.append(be(ms(k)))
    phase["calm"] = {p[IP].id for p in pkts}
    # Phase 2 (500 ms): a 1500-byte packet keeps the link busy while a burst of every class
    # arrives at one instant, best effort first and voice last.
    pkts.append(be(ms(499.5), size=1500))
    burst = [be(ms(500)) for _ in range(10)] + [af(ms(500)) for _ in range(10)] + \
        [ef(ms(500)) for _ in range(3)]
    pkts += burst
    phase["burst"] = [p[IP].id for p in burst]
    # Phase 3 (1000-1200 ms): the AF customer sends 1 MB/s, ten times its profile.
    heavy_af = [af(ms(1000 + k), size=1000) for k in range(200)]
    pkts += heavy_af
    phase["heavy_af"] = [p[IP].id for p in heavy_af]
    # Phase 4 (1500-1600 ms): voice at 1000 packets/s, five times its profile.
    heavy_ef = [ef(ms(1500 + k)) for k in range(100)]
    pkts += heavy_ef
    phase["heavy_ef"] = [p[IP].id for p in heavy_ef]
    # Phase 5 (2000 ms): a best-effort flood of 1500-byte packets, far beyond the link.
    pkts += [be(ms(2000 + k / 4), size=1500) for k in range(400)]
    # A runt that fails CheckIPHeader.
    runt = Ether(src=SRC_MAC, dst=DST_MAC, type=0x0800) / Raw(b"\x45\x00\x00")
    runt.time = ms(2500)
    pkts.append(runt)
    return pkts, phase


@pytest.fixture(scope="module")
def run(sluice_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("qos")
    pkts, phase = traffic()
    wrpcap(str(d / "in.pcap"), pkts)
    args = [str(sluice_bin), "--simtime", "-f", str(CONF), f"IN={d / 'in.pcap'}",
            f"OUT={d / 'out.pcap'}"]
    for h in DROP_HANDLERS + QUEUED + ["link.count", "src.count"]:
        args += ["-h", h]
    proc = subprocess.run(args, cwd=d, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {
        "in": pkts,
        "out": rdpcap(str(d / "out.pcap")),
        "phase": phase,
        "h": parse_handlers(proc.stdout),
        "stderr": proc.stderr,
    }


def dscp(p):
    return p[IP].tos >> 2


def by_class(pkts):
    ef_, af_, be_ = [], [], []
    for p in pkts:
        if IP not in p:
            continue
        if UDP in p and p[UDP].dport == 5004:
            ef_.append(p)
        elif p[IP].src == GOLD:
            af_.append(p)
        else:
            be_.append(p)
    return ef_, af_, be_


def test_every_packet_is_sent_or_counted(run):
    h = run["h"]
    drops = sum(int(h[name]) for name in DROP_HANDLERS)
    queued = sum(int(h[name]) for name in QUEUED)
    assert int(h["src.count"]) == len(run["in"])
    assert int(h["link.count"]) == len(run["out"])
    assert len(run["out"]) + drops + queued == len(run["in"]), h
    # The queues drained: nothing was left behind when the input ended.
    assert queued == 0, h
    # Each dropping element saw what the traffic was built to make it drop.
    assert int(h["chk.drops"]) == 1
    assert int(h["ef_excess.count"]) > 0
    assert int(h["red.drops"]) + int(h["be_q.drops"]) > 0
    assert int(h["af_q.drops"]) == 0


def test_marks_per_class(run):
    ef_, af_, be_ = by_class(run["out"])
    assert ef_ and af_ and be_
    assert {dscp(p) for p in ef_} == {46}
    assert {dscp(p) for p in af_} <= {10, 12}
    assert {dscp(p) for p in be_} == {0}
    # ECN bits are left alone, and the checksums were updated with the marks.
    for p in run["out"]:
        assert p[IP].tos & 3 == 0
        c = p[IP].copy()
        c.chksum = None
        assert IP(bytes(c)).chksum == p[IP].chksum


def test_af_in_profile_is_af11_and_excess_is_af12(run):
    ph = run["phase"]
    _, af_, _ = by_class(run["out"])
    calm = [dscp(p) for p in af_ if p[IP].id in ph["calm"]]
    assert calm and set(calm) == {10}
    heavy = {p[IP].id: dscp(p) for p in af_ if p[IP].id in set(ph["heavy_af"])}
    # Nothing of the AF customer is dropped: marked AF12 once its rate is measured above
    # the profile (after a few milliseconds), AF11 before that.
    assert len(heavy) == len(ph["heavy_af"])
    marks = [heavy[i] for i in ph["heavy_af"]]
    first12 = marks.index(12)
    assert 0 < first12 < 20
    assert set(marks[first12:]) == {12}


def test_ef_policed_above_profile(run):
    ph = run["phase"]
    ef_, _, _ = by_class(run["out"])
    sent = {p[IP].id for p in ef_}
    heavy = ph["heavy_ef"]
    kept = [i for i in heavy if i in sent]
    # The first packets pass while the measured rate catches up, then voice above 200
    # packets/s is dropped whole (a meter does not split).
    assert heavy[0] in sent
    assert 0 < len(kept) < len(heavy)
    assert int(run["h"]["ef_excess.count"]) == len(heavy) - len(kept)


def test_ef_leaves_first_from_a_burst(run):
    burst = run["phase"]["burst"]
    ids = [p[IP].id for p in run["out"] if IP in p]
    pos = [ids.index(i) for i in burst]
    first = min(pos)
    ef_ids = set(burst[-3:])
    # All three voice packets leave before any best-effort or AF packet of the burst.
    assert sorted(ids[first:first + 3]) == sorted(ef_ids)
    # Then AF and BE share the link: both appear among the next few packets.
    nxt = ids[first + 3:first + 9]
    assert any(i in burst[:10] for i in nxt) and any(i in burst[10:20] for i in nxt)
