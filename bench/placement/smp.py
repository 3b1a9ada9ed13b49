#!/usr/bin/env python3
"""The planner against hand placement on the SMP Click configurations (conf/smp/*.click).

For each configuration, on two threads (SMP_THREADS):
- for a configuration the planner places as task groups, every placement of its groups
  that `sluice plan CONFIG -j 2 --top SMP_TOP` lists (one per way of grouping them on threads),
  written as a StaticThreadSched line in place of the configuration's own, and run: the best
  of these is the best placement anyone could write by hand. A chain (pipeline.click) is
  rewritten by the planner instead (cloning, pipelining or a mix); its hand placement is
  the configuration as written;
- the placement as written in conf/smp (the hand placement of SMP Click's figures);
- everything on one thread;
- the planner's choice (`sluice -j 2 --plan show`), run the same way. Planning time is
  reported apart: it is paid once, before the router starts.

Each run forwards LIMIT packets per source; the rate is the packets that reached a Discard
per second of the run's wall time (median of RUNS runs, placements interleaved so that
drifts in the machine's speed hit them alike).

Usage: bench/placement/smp.py [SLUICE]
  SLUICE: the binary (default $SLUICE, else target/release/sluice).
Environment: SMP_QUICK=1 (small LIMITs, one run: a smoke test), SMP_RUNS (default 5),
SMP_THREADS (default 2), SMP_TOP (placements listed by the planner that are run; default 1000,
every one on two threads).
Prints a table per configuration and a summary.
"""

import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from fig2 import sluice_binary  # noqa: E402  (the binary from argv[1], $SLUICE or release)
QUICK = os.environ.get("SMP_QUICK") == "1"
RUNS = 1 if QUICK else int(os.environ.get("SMP_RUNS", "5"))
THREADS = os.environ.get("SMP_THREADS", "2")
TOP = os.environ.get("SMP_TOP", "1000")
# Packets per source: runs of about 0.3 to 1 s on the 2-core VM.
LIMITS = {
    "fake-iprouter-x2.click": 2_000_000,
    "flow-split.click": 1_000_000,
    "pipeline.click": 3_000_000,
    "qos-replicated.click": 1_000_000,
}
if QUICK:
    LIMITS = {k: v // 50 for k, v in LIMITS.items()}


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=600, **kw)
    if p.returncode != 0:
        sys.exit(f"smp.py: {' '.join(args)} failed:\n{p.stderr}")
    return p


def groups_and_placements(sluice, conf, limit):
    """The planner's task groups (name -> tasks) and listed placements (thread -> groups)."""
    out = run([sluice, "plan", conf, "-j", THREADS, "--top", TOP, f"LIMIT={limit}"]).stdout
    groups = {}
    for m in re.finditer(r"^(g\d+)\s+\S+\s+\S+\s+\S+\s+t\d+\s+(.+)$", out, re.M):
        groups[m[1]] = m[2].split(" (")[0].split()
    placements = []
    for m in re.finditer(r"^\s*\d+\.\s+\S+\s+(t0: .*?)(\s+\(as written\))?$", out, re.M):
        threads = {}
        for part in m[1].split(" | "):
            t, gs = part.split(": ")
            threads[int(t[1:])] = [] if gs == "-" else gs.split()
        placements.append((threads, bool(m[2])))
    return groups, placements


def pinned(text, groups, threads):
    """`text` with its StaticThreadSched lines replaced by one for `threads`."""
    body = re.sub(r"^\s*StaticThreadSched\([^;]*\);\s*$", "", text, flags=re.M)
    pins = [f"{task} {t}" for t, gs in sorted(threads.items()) for g in gs for task in groups[g]]
    return body + f"\nStaticThreadSched({', '.join(pins)});\n"


def measure(sluice, text, limit):
    """Delivered packets per second of one run of `text` on THREADS threads."""
    args = [sluice, "-j", THREADS, "-e", text, f"LIMIT={limit}", "-h", "Discard.count"]
    t = time.monotonic()
    out = run(args).stdout
    secs = time.monotonic() - t
    got = sum(int(v) for v in re.findall(r"^(\d+)$", out, re.M))
    return got / secs


def describe(threads):
    return " | ".join(f"t{t}: {' '.join(gs) or '-'}" for t, gs in sorted(threads.items()))


def main():
    sluice = sluice_binary()
    summary = []
    for name, limit in LIMITS.items():
        conf = os.path.join("conf", "smp", name)
        text = open(os.path.join(ROOT, conf)).read()
        t = time.monotonic()
        shown = run([sluice, "-j", THREADS, "--plan", "show", "-f", conf, f"LIMIT={limit}"])
        planning = time.monotonic() - t
        choice = re.match(r"plan: (?:task groups )?(.*?), predicted", shown.stderr)[1]
        variants = {}
        if choice.startswith("t0:"):
            groups, placements = groups_and_placements(sluice, conf, limit)
            for threads, written in placements:
                variants[describe(threads)] = (pinned(text, groups, threads), written)
            one = {0: list(groups), 1: []}
            variants.setdefault(describe(one), (pinned(text, groups, one), False))
            one = describe(one)
        else:
            # A chain: the planner rewrites it (cloning, pipelining, mix); the hand
            # placement is the configuration as written, and one thread pins its tasks to 0.
            pins = re.search(r"StaticThreadSched\(([^)]*)\)", text)[1]
            tasks = [p.split()[0] for p in pins.split(",")]
            variants["as written"] = (text, True)
            one = "one thread"
            variants[one] = (pinned(text, {"all": tasks}, {0: ["all"]}), False)
        variants["plan"] = (shown.stdout, False)
        rates = {k: [] for k in variants}
        for _ in range(RUNS):
            for k, (v, _) in variants.items():
                rates[k].append(measure(sluice, v, limit))
        med = {k: statistics.median(v) for k, v in rates.items()}
        best = max((k for k in med if k != "plan"), key=med.get)
        written = next((k for k, (_, w) in variants.items() if w), None)
        print(f"\n### {name} (LIMIT {limit} per source; plan: {choice}, planning {planning:.1f} s)\n")
        print("| placement | Mpps delivered | runs spread | note |")
        print("|---|---|---|---|")
        for k in variants:
            r = rates[k]
            spread = (max(r) - min(r)) / med[k] if med[k] else 0.0
            note = []
            if k == written:
                note.append("as written")
            if k == one:
                note.append("one thread")
            if k == best:
                note.append("best by hand")
            if k == "plan":
                note.append(f"the planner's ({choice})")
            print(f"| {k} | {med[k] / 1e6:.2f} | {spread:.0%} | {', '.join(note)} |")
        summary.append((name, med["plan"], med[best], med.get(written, 0.0), med[one]))
    print("\n| configuration | plan / best by hand | plan / as written | plan / one thread |")
    print("|---|---|---|---|")
    for name, plan, best, written, one in summary:
        print(f"| {name} | {plan / best:.2f} | {plan / written if written else float('nan'):.2f} "
              f"| {plan / one:.2f} |")
    load = os.getloadavg()[0]
    print(f"\n{RUNS} runs per placement on {THREADS} threads, {sluice}, load average {load:.2f} "
          "at the end")


if __name__ == "__main__":
    main()
