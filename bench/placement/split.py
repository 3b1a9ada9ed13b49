#!/usr/bin/env python3
"""The flow split against pipelining and one thread, for a chain whose source cannot be copied:
`FromDump(FILE, BURST B) -> w :: SyntheticLoad(N, 64K) -> d :: Discard` on two threads.

For each (N, B): `sluice plan CONF -j 2 --show-all` gives the predictions and the written
configurations of the flow split, the best pipelined cut and the one-thread placement; each is
run RUNS times (interleaved) with an AverageCounter in front of every Discard, and the fastest
run counts. The file holds PACKETS 64-byte UDP frames of 1024 flows (addresses in
198.18.0.0/15), written here with the standard library.

Usage: bench/placement/split.py [SLUICE]
Environment: SPLIT_QUICK=1 (one point, few packets), MACHINE (plan --machine FILE).
Prints the table of bench/placement/README.md's flow split section.
"""

import os
import re
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wide  # noqa: E402  (takes the binary from argv[1] or $SLUICE)

QUICK = os.environ.get("SPLIT_QUICK") == "1"
PACKETS = 60_000 if QUICK else 600_000
POINTS = [(20, 32), (400, 32), (20, 1), (100, 1), (400, 1)]
if QUICK:
    POINTS = [(100, 1)]
RUNS = 1 if QUICK else 3
KINDS = ("flow split", "pipelining", "subset")


def write_pcap(path, n):
    """`n` Ethernet/IPv4/UDP frames of 64 bytes, 1024 flows, round robin."""
    frames = []
    for f in range(1024):
        src = bytes([198, 18, f >> 8, f & 255])
        dst = bytes([198, 19, f >> 8, f & 255])
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 50, 0, 0, 64, 17, 0, src, dst)
        s = sum(struct.unpack("!10H", ip))
        s = (s & 0xFFFF) + (s >> 16)
        ip = ip[:10] + struct.pack("!H", ~s & 0xFFFF) + ip[12:]
        udp = struct.pack("!HHHH", 1024 + f, 9, 30, 0) + bytes(22)
        eth = bytes.fromhex("020000000001020000000002") + b"\x08\x00"
        frames.append(eth + ip + udp)
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            fr = frames[i % 1024]
            out.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(fr), len(fr)))
            out.write(fr)


def main():
    tmp = tempfile.mkdtemp(prefix="sluice-split-")
    pcap = os.path.join(tmp, "in.pcap")
    write_pcap(pcap, PACKETS)
    print("| N | FromDump BURST | predicted split / pipelined / one thread "
          "| measured split / pipelined / one thread | planner's choice |")
    print("|---|---|---|---|---|")
    for n, burst in POINTS:
        conf = os.path.join(tmp, "chain.click")
        with open(conf, "w") as f:
            f.write(f"src :: FromDump({pcap}, BURST {burst}, STOP true, TIMING false)\n"
                    f"    -> w :: SyntheticLoad({n}, 64K) -> d :: Discard;\n")
        args = ["plan", conf, "-j", "2", "--show-all", "--top", "40"]
        if os.environ.get("MACHINE"):
            args += ["--machine", os.environ["MACHINE"]]
        cands, confs = wide.candidates(wide.sluice(args))
        first = min(cands)
        best = {}
        for k in sorted(cands):
            kind = cands[k][0]
            if kind in KINDS and kind not in best and k in confs:
                best[kind] = k
        texts = {kind: wide.counted(confs[k], 0)[0] for kind, k in best.items()}
        acs = {kind: re.findall(r"(\w+_ac) :: AverageCounter", t) for kind, t in texts.items()}
        rates = {kind: [] for kind in best}
        for _ in range(RUNS):
            for kind in best:
                rates[kind].append(wide.rate(2, texts[kind], acs[kind]))
        pred = " / ".join(f"{cands[best[k]][1]:.3g}" if k in best else "-" for k in KINDS)
        meas = " / ".join(f"{max(rates[k]) / 1e6:.3g}" if k in best else "-" for k in KINDS)
        choice = cands[first][0]
        fastest = max(best, key=lambda k: max(rates[k]))
        ok = max(rates.get(choice, [0])) >= 0.95 * max(rates[fastest])
        print(f"| {n} | {burst} | {pred} | {meas} | {choice}"
              f"{'' if ok else f' (**miss**: {fastest} measured fastest)'} |", flush=True)


if __name__ == "__main__":
    main()
