"""`sluice plan` and `--plan auto|show` from the command line: the planned configuration
forwards every packet of the original once, on two threads (bench/placement/two-loads.click,
two SyntheticLoad stages; and a flow-splitting graph on pcap traffic, checked with scapy)."""
import re
import subprocess
from collections import Counter

from scapy.all import IP, UDP, Ether, Raw, rdpcap, wrpcap

from sluice_binary import ROOT

CONF = str(ROOT / "bench" / "placement" / "two-loads.click")


def sluice(sluice_bin, *args, timeout=120):
    return subprocess.run([str(sluice_bin), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def counts(text):
    """`NAME.count` handler values from -h output."""
    return {m[0]: int(m[1]) for m in re.findall(r"^(\S+)\.count:\n(\d+)", text, re.M)}


def test_plan_reports_candidates_and_a_choice(sluice_bin):
    p = sluice(sluice_bin, "plan", CONF, "-j", "2", "N=20", "S=256K")
    assert p.returncode == 0, p.stderr
    assert "cloning" in p.stdout and "pipelining" in p.stdout
    assert re.search(r"^## choice", p.stdout, re.M), p.stdout
    assert "reason:" in p.stdout


def test_plan_auto_forwards_every_packet_once(sluice_bin):
    for size in ("128K", "4M"):
        p = sluice(sluice_bin, "-j", "2", "--plan", "auto", CONF, "N=20", f"S={size}",
                   "LIMIT=40000", "-h", "*.count", "-h", "drops")
        assert p.returncode == 0, p.stderr
        assert p.stderr.startswith("plan: "), p.stderr
        c = counts(p.stdout)
        sinks = {k: v for k, v in c.items() if k == "d" or k.startswith("d_t")}
        assert sum(sinks.values()) == 40000, (size, c)


def test_plan_show_prints_a_runnable_configuration(sluice_bin, tmp_path):
    p = sluice(sluice_bin, "-j", "2", "--plan", "show", CONF, "N=20", "S=1M", "LIMIT=30000")
    assert p.returncode == 0, p.stderr
    assert "StaticThreadSched" in p.stdout
    f = tmp_path / "planned.click"
    f.write_text(p.stdout)
    r = sluice(sluice_bin, "-j", "2", str(f), "-h", "*.count")
    assert r.returncode == 0, r.stderr
    c = counts(r.stdout)
    assert sum(v for k, v in c.items() if k == "d" or k.startswith("d_t")) == 30000, c


# SMP Click's flow splitting on pcap traffic: two FromDump sources meet at a HashSwitch that
# feeds two ThreadSafeQueues; each queue's Unqueue runs a SyntheticLoad and writes its own
# pcap. The planner places the three task groups.
SPLIT = """
a :: FromDump(a.pcap, STOP true, TIMING false) -> hs :: HashSwitch(30, 4);
b :: FromDump(b.pcap, STOP true, TIMING false) -> hs;
hs[0] -> q0 :: ThreadSafeQueue(100000) -> u0 :: Unqueue
      -> SyntheticLoad(20, 64K, SEED 1) -> ToDump(out0.pcap);
hs[1] -> q1 :: ThreadSafeQueue(100000) -> u1 :: Unqueue
      -> SyntheticLoad(20, 64K, SEED 2) -> ToDump(out1.pcap);
StaticThreadSched(a 0, b 0, u0 0, u1 0);
DriverManager(wait_stop 2, stop);
"""


def split_traffic():
    def pkt(src, i):
        dst = f"198.18.1.{i % 8 + 1}"
        return (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                / IP(src=src, dst=dst) / UDP(sport=1000 + i % 50, dport=5000)
                / Raw(f"packet {i}".encode()))
    return ([pkt("198.18.0.1", i) for i in range(3000)],
            [pkt("198.18.0.2", i) for i in range(2000)])


def test_plan_auto_places_task_groups_and_forwards_every_packet_once(sluice_bin, tmp_path):
    a, b = split_traffic()
    wrpcap(str(tmp_path / "a.pcap"), a)
    wrpcap(str(tmp_path / "b.pcap"), b)
    conf = tmp_path / "split.click"
    conf.write_text(SPLIT)
    p = subprocess.run([str(sluice_bin), "plan", str(conf), "-j", "2"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^q0: g\d -> g\d, 0\.\d+ packets per source packet", p.stdout, re.M), p.stdout
    assert "(as written)" in p.stdout and "## choice" in p.stdout, p.stdout
    r = subprocess.run([str(sluice_bin), "-j", "2", "--plan", "auto", str(conf), "-h", "tasks",
                        "-h", "q0.drops", "-h", "q1.drops"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("plan: task groups t0:"), r.stderr
    # The tasks run where the plan put them: thread 1 is used exactly when the plan uses it.
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    threads = {row[0] for row in rows if len(row) == 6 and row[1] in ("a", "b", "u0", "u1")}
    assert len(threads) >= 1, r.stdout
    assert ("1" in threads) == ("t1: -" not in r.stderr), (r.stderr, r.stdout)
    sent = Counter(bytes(x) for x in a + b)
    got = Counter(bytes(x) for f in ("out0.pcap", "out1.pcap") for x in rdpcap(str(tmp_path / f)))
    assert got == sent


# A chain whose source is a file cannot be cloned: one expensive element makes the flow
# split (source hashing flows to a copy of the element on each thread) the choice; the copies
# meet again at the one ToDump. Every packet must come out once, each flow in order.
FILE_CHAIN = """
src :: FromDump(in.pcap, STOP true, TIMING false)
    -> w :: SyntheticLoad(300, 64K) -> ToDump(out.pcap);
"""


def test_plan_auto_splits_flows_of_a_source_it_cannot_copy(sluice_bin, tmp_path):
    a, b = split_traffic()
    wrpcap(str(tmp_path / "in.pcap"), a + b)
    conf = tmp_path / "chain.click"
    conf.write_text(FILE_CHAIN)
    r = subprocess.run([str(sluice_bin), "-j", "2", "--plan", "auto", str(conf), "-h", "tasks"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("plan: flow split"), r.stderr
    assert {row.split("\t")[0] for row in r.stdout.splitlines()[1:]} == {"0", "1"}, r.stdout
    out = rdpcap(str(tmp_path / "out.pcap"))

    def flows(pkts):
        f = {}
        for p in pkts:
            f.setdefault((p[IP].src, p[IP].dst, p[UDP].sport), []).append(bytes(p))
        return f

    assert len(out) == len(a) + len(b)
    assert flows(out) == flows(a + b)


# Four independent paths; s0 and s2 are cheap at first, so the plan puts them on one
# thread, until a Script makes both seven times as expensive: the running router must
# re-plan and separate them, losing no packet in the hand-over.
DRIFT = """
s0 :: InfiniteSource(LENGTH 64, LIMIT 4000000, BURST 32, STOP true, TIMESTAMP false)
   -> w0 :: SyntheticLoad(0, 8, CYCLES 200) -> c0 :: Counter -> Discard;
s1 :: InfiniteSource(LENGTH 64, LIMIT 8000000, BURST 32, STOP true, TIMESTAMP false)
   -> w1 :: SyntheticLoad(0, 8, CYCLES 400) -> c1 :: Counter -> Discard;
s2 :: InfiniteSource(LENGTH 64, LIMIT 4000000, BURST 32, STOP true, TIMESTAMP false)
   -> w2 :: SyntheticLoad(0, 8, CYCLES 200) -> c2 :: Counter -> Discard;
s3 :: InfiniteSource(LENGTH 64, LIMIT 8000000, BURST 32, STOP true, TIMESTAMP false)
   -> c3 :: Counter -> Discard;
Script(wait 0.5s, write w0.cycles 1500, write w2.cycles 1500);
DriverManager(wait_stop 4, stop);
"""


def test_plan_auto_replans_when_costs_drift(sluice_bin):
    r = sluice(sluice_bin, "-j", "2", "--plan", "auto", "--log", "info", "-e", DRIFT,
               "-h", "tasks", "-h", "c*.count")
    assert r.returncode == 0, r.stderr
    moved = re.findall(r"re-planning: task group costs drifted .* moves=(\d+)", r.stderr)
    assert any(int(m) > 0 for m in moved), r.stderr
    thread = {row[1]: row[0] for row in (line.split("\t") for line in r.stdout.splitlines())
              if len(row) == 6}
    assert thread["s0"] != thread["s2"], r.stdout
    c = counts(r.stdout)
    assert c == {"c0": 4000000, "c1": 8000000, "c2": 4000000, "c3": 8000000}, c


def test_plan_of_one_task_group_says_so(sluice_bin):
    p = sluice(sluice_bin, "plan", "-j", "2", "-e",
               "s :: InfiniteSource(LIMIT 10) -> t :: Tee -> Discard; t[1] -> Discard;")
    assert p.returncode == 0, p.stderr
    assert "one task group" in p.stdout, p.stdout


def test_every_listed_candidate_runs_and_forwards_every_packet(sluice_bin, tmp_path):
    p = sluice(sluice_bin, "plan", CONF, "-j", "2", "--no-trial", "--show-all", "N=20",
               "S=256K", "LIMIT=20000")
    assert p.returncode == 0, p.stderr
    parts = re.split(r"^## configuration of candidate (\d+)\. .*$", p.stdout, flags=re.M)
    confs = dict(zip(parts[1::2], parts[2::2]))
    listed = re.findall(r"^\s*(\d+)\.\s+(?:cloning|pipelining|mix|subset)\s", p.stdout, re.M)
    assert len(confs) >= 3 and set(confs) == set(listed), (sorted(confs), listed)
    for k, text in confs.items():
        f = tmp_path / f"c{k}.click"
        f.write_text(text)
        r = sluice(sluice_bin, "-j", "2", str(f), "-h", "*.count")
        assert r.returncode == 0, (k, r.stderr)
        c = counts(r.stdout)
        assert sum(v for n, v in c.items() if n == "d" or n.startswith("d_t")) == 20000, (k, c)
