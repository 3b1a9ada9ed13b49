"""End-to-end test of DFQ between two Sluice routers, on pcap files.

Router A reads a scapy-crafted capture (FromDump TIMING, --simtime), numbers the UDP flows
with AggregateIPFlows, schedules them with DFQSched in batch mode over a LinkUnqueue of
1 MB/s and writes the transmission batches, in Ethernet frames of type 0x88B5, to a capture.
Router B reads that capture and rebuilds the packets with DFQDemux. Checked here, with scapy
and this file's own decoder of the batch format (not Sluice's):

- every packet comes out byte for byte, in order within its flow, or was counted as a drop;
- the conforming flows (token buckets within their reservation) never wait longer than the
  delay bound (ceil(P/Q) + 3) * T, computed here from the reservation;
- the two greedy flows, with equal reservations, share the spare capacity equally, and the
  link stays busy while they are backlogged (work conservation).
"""
import struct
import subprocess
from collections import defaultdict

import pytest
from scapy.all import IP, UDP, Ether, Raw, rdpcap, wrpcap

SIM_START = 946684800.0
LINK = 1_000_000          # bytes/s
CYCLE = 0.010             # T
BURST, DELAY = 4000, 0.040
QUANTUM = BURST * CYCLE / DELAY
BOUND = (-(-BURST // QUANTUM) + 3) * CYCLE
CONFORMING = [1, 2, 3]
GREEDY = [4, 5]

ROUTER_A = f"""
src :: FromDump(in.pcap, STOP true, TIMING true)
  -> af :: AggregateIPFlows
  -> s :: DFQSched(FLOWS 8, BANDWIDTH {LINK}Bps, CYCLE {CYCLE}s, RATE 100kBps,
                   BURST {BURST}, DELAY {DELAY}s, CAPACITY 40)
  -> link :: LinkUnqueue(0, {LINK}Bps)
  -> EtherEncap(0x88B5, 02:00:00:00:00:01, 02:00:00:00:00:02)
  -> ToDump(batches.pcap, SNAPLEN 0);
DriverManager(wait_stop, wait_time 30s, stop)
"""

ROUTER_B = """
FromDump(batches.pcap, STOP true) -> Strip(14) -> m :: DFQDemux -> ToDump(out.pcap, SNAPLEN 0)
"""


def flow_packet(flow, seq, t, size):
    """A UDP frame of flow `flow` (its source port), `size` bytes, carrying `seq` in the IP id."""
    p = Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b") / \
        IP(src="198.18.0.1", dst="198.19.0.1", id=seq) / UDP(sport=10000 + flow, dport=9)
    p = p / Raw(bytes(size - len(p)))
    p.time = t
    return p


def traffic():
    """Flows numbered 1..5 in order of first appearance (AggregateIPFlows' numbering)."""
    pkts = []
    for f in CONFORMING + GREEDY:
        pkts.append((1.0 + f * 1e-6, f, 200 if f in CONFORMING else 1500))
    for f in CONFORMING:
        # A token bucket within (BURST, 100 kB/s) counting the 2-byte prefix: a burst of
        # 15 frames of 200 bytes, then one every 2.5 ms (80.8 kB/s) for a second.
        pkts += [(1.001 + f * 1e-4, f, 200) for _ in range(14)]
        pkts += [(1.01 + k * 0.0025 + f * 1e-4, f, 200) for k in range(400)]
    for f in GREEDY:
        # 1.5 MB/s each: far beyond the link.
        pkts += [(1.001 + k * 0.001 + f * 1e-5, f, 1500) for k in range(1000)]
    pkts.sort(key=lambda x: x[0])
    seqs = defaultdict(int)
    out = []
    for t, f, size in pkts:
        out.append(flow_packet(f, seqs[f], t, size))
        seqs[f] += 1
    return out


def decode(batch):
    """This file's decoder of a batch: (cycle, [(flow, quantum bytes)])."""
    magic, ver, length, cycle, first, bitmap = struct.unpack(">BBHIIQ", batch[:20])
    assert (magic, ver) == (0xDF, 1)
    assert bitmap & 1
    at, quanta = 20, []
    for bit in range(64):
        if bitmap >> bit & 1:
            (n,) = struct.unpack(">H", batch[at:at + 2])
            quanta.append((first + bit, batch[at + 2:at + 2 + n]))
            at += 2 + n
    assert at == length
    return cycle, quanta


def handlers(out):
    res, lines, i = {}, out.splitlines(), 0
    while i < len(lines):
        if lines[i].endswith(":") and "." in lines[i]:
            name, buf = lines[i][:-1], []
            i += 1
            while i < len(lines) and lines[i] != "":
                buf.append(lines[i])
                i += 1
            res[name] = "\n".join(buf)
        i += 1
    return res


@pytest.fixture(scope="module")
def run(sluice_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("dfq")
    pkts = traffic()
    wrpcap(str(d / "in.pcap"), pkts)
    res = {"in": pkts}
    for name, conf, hs in [("a", ROUTER_A, ["s.drops", "s.length", "s.flows", "s.admitted"]),
                           ("b", ROUTER_B, ["m.drops", "m.packets", "m.pending"])]:
        (d / f"{name}.click").write_text(conf)
        args = [str(sluice_bin), "--simtime", "-f", str(d / f"{name}.click")]
        for h in hs:
            args += ["-h", h]
        proc = subprocess.run(args, cwd=d, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        res[name] = handlers(proc.stdout)
    res["batches"] = rdpcap(str(d / "batches.pcap"))
    res["out"] = rdpcap(str(d / "out.pcap"))
    return res


def flow_of(p):
    return p[UDP].sport - 10000


def test_packets_come_out_identical_and_in_order_per_flow(run):
    assert run["a"]["s.admitted"] == "true"
    assert int(run["a"]["s.length"]) == 0
    assert int(run["b"]["m.drops"]) == 0 and int(run["b"]["m.pending"]) == 0
    sent, got = defaultdict(list), defaultdict(list)
    for p in run["in"]:
        sent[flow_of(p)].append(bytes(p))
    for p in run["out"]:
        got[flow_of(Ether(bytes(p)))].append(bytes(p))
    drops = 0
    for f in CONFORMING:
        assert got[f] == sent[f], f"flow {f}"
    for f in GREEDY:
        # Tail drops at the flow queue: what leaves is an ordered subsequence.
        it = iter(sent[f])
        assert all(any(p == q for q in it) for p in got[f]), f"flow {f} reordered"
        drops += len(sent[f]) - len(got[f])
    assert drops == int(run["a"]["s.drops"]) > 0


def test_conforming_flows_stay_within_the_delay_bound(run):
    t0 = min(float(p.time) for p in run["in"])
    arrival = {(flow_of(p), p[IP].id): float(p.time) - t0 for p in run["in"]}
    worst = defaultdict(float)
    for p in run["out"]:
        e = Ether(bytes(p))
        f = flow_of(e)
        delay = float(p.time) - SIM_START - arrival[(f, e[IP].id)]
        assert delay >= -1e-6
        worst[f] = max(worst[f], delay)
    for f in CONFORMING:
        assert worst[f] <= BOUND + 1e-6, f"flow {f}: {worst[f]:.4f} s > {BOUND} s"
    # The greedy flows, far beyond their reservations, wait much longer.
    assert min(worst[f] for f in GREEDY) > BOUND


def test_greedy_flows_share_spare_capacity_equally_and_the_link_stays_busy(run):
    per_flow = defaultdict(int)
    link_bytes = 0
    window = (SIM_START + 0.2, SIM_START + 0.9)
    for b in run["batches"]:
        t = float(b.time)
        if not window[0] <= t < window[1]:
            continue
        data = bytes(b)[14:]
        link_bytes += len(data)
        for f, q in decode(data)[1]:
            per_flow[f] += len(q)
    span = window[1] - window[0]
    assert link_bytes / span >= 0.95 * LINK
    a, b = (per_flow[f] for f in GREEDY)
    assert abs(a - b) / max(a, b) < 0.05, per_flow
    # Each greedy flow gets well over its reserved 100 kB/s.
    assert min(a, b) / span > 2 * 100_000
