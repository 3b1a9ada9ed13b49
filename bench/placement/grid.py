#!/usr/bin/env python3
"""The placement study's grid: how often `sluice plan` picks the faster of cloning and
pipelining for the two-element chain on two threads, over (N1, N2, S).

Points: N1 = N2 in {20, 100, 200} x S in {128K, 1M, 4M, 8M, 32M}, and (N1, N2) in {(300, 100),
(396, 4), (100, 20)} x S in {256K, 4M, 8M, 32M, 64M}: 30 in all.

How: every point uses bench/placement/two-loads-imbalanced.click (first element N1 random reads
per packet of its S-byte array, second N2).
- Measured as fig2.py's imbalance case (its `imb_configs` / `measure_imbalance`): cloned is two
  pinned copies of the chain, pipelined is `a -> ThreadSafeQueue(4096) -> Unqueue -> b` on
  threads 0 and 1; each runs with `sluice -j 2` RUNS times, alternating, the rate read from an
  AverageCounter(IGNORE 0.02) before each Discard. Each source sends READS / (N1 + N2) packets,
  so that runs last about 0.1 to 2 s whatever N is.
- Predicted with `sluice plan bench/placement/two-loads-imbalanced.click -j 2 N1=.. N2=.. S=..
  CYCLES=0` (fig2.py's `plan`): the cloning candidate and the pipelining candidate with the
  measured cut `[src..a] g0 | [b..d] g1`. The model's choice is the better predicted of the two.
  The planner's final choice is the one its trial chose when the model could not tell its
  best placements apart (`## trial`), else the model's first candidate; a final choice that is
  neither of the two measured placements counts as a miss.
- A point matches when the chosen placement measures at least 95% of the measured best.

Usage: bench/placement/grid.py [SLUICE]
  SLUICE: the binary (default $SLUICE, else target/release/sluice under the repository root).
Environment: GRID_QUICK=1 (three points, few packets: a smoke test), GRID_OUT=DIR (where
grid.csv goes; default bench/placement), MACHINE (plan --machine FILE).
Writes grid.csv, prints progress on stderr, and on stdout the table of all points, the
confusion table of the planner's choice against the measured winner, a summary and the misses.
"""

import csv
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fig2  # noqa: E402  (takes the binary from argv[1] or $SLUICE)

QUICK = os.environ.get("GRID_QUICK") == "1"
OUT = os.environ.get("GRID_OUT", HERE)
CONFIG = os.path.join(HERE, "two-loads-imbalanced.click")

POINTS = [(n, n, s) for n in (20, 100, 200) for s in ("128K", "1M", "4M", "8M", "32M")]
POINTS += [(n1, n2, s) for n1, n2 in ((300, 100), (396, 4), (100, 20))
           for s in ("256K", "4M", "8M", "32M", "64M")]
# Random reads per source and run (fig2.py's imbalance case: 40 000 packets x 400 reads).
READS = 48_000_000
if QUICK:
    POINTS = [(20, 20, "128K"), (200, 200, "8M"), (396, 4, "4M")]
    READS = 24_000_000

KINDS = ("cloning", "pipelining")
TRIED = re.compile(r"^\s*\d+\.\s+(cloning|pipelining|mix|subset|flow split)\s+predicted\s+\S+"
                   r"\s+measured\s+\S+\s+(.*?)\s+\(chosen\)$")


def final_choice(out):
    """The planner's final choice in `sluice plan` output `out`, and whether a trial made it:
    `cloning`, `pipelining` (the measured cut) or the kind and stages of another placement."""
    lines = out.splitlines()
    m = next((m for m in map(TRIED.match, lines) if m), None)
    tried = m is not None
    if m:
        kind, where = m[1], m[2]
    else:
        m = next(m for m in map(fig2.CAND.match, lines) if m)
        kind, where = m[1], m[3].strip()
    if kind == "cloning":
        return "cloning", tried
    if kind == "pipelining" and where == fig2.MEASURED_CUT:
        return "pipelining", tried
    return f"{kind} {where}", tried


def measure_point(n1, n2, s):
    """One grid point: its CSV row (rates in Mpps)."""
    t = time.time()
    pc, pp, top, other, out = fig2.plan(CONFIG, {"N1": n1, "N2": n2, "S": s, "CYCLES": 0})
    fig2.IMB_LIMIT = READS // (n1 + n2)  # measure_imbalance's packets per source
    mc, mp, _, noise = fig2.measure_imbalance(n1, n2, s)
    choice = "pipelining" if pp > pc else "cloning"
    chosen, best = (mp if choice == "pipelining" else mc), max(mc, mp)
    final, tried = final_choice(out)
    final_rate = {"cloning": mc, "pipelining": mp}.get(final, 0.0)
    row = {
        "N1": n1, "N2": n2, "S": s, "S_bytes": fig2.size_bytes(s),
        "packets_per_source": fig2.IMB_LIMIT,
        "meas_cloned_mpps": mc / 1e6, "meas_pipelined_mpps": mp / 1e6,
        "pred_cloned_mpps": pc / 1e6, "pred_pipelined_mpps": pp / 1e6,
        "plan_choice": choice, "plan_top": top, "plan_best_pipe": other,
        "meas_winner": "pipelining" if mp > mc else "cloning",
        "choice_loss": 1 - chosen / best,
        "match": chosen >= 0.95 * best,
        "final_choice": final, "tried": tried,
        "final_match": final_rate >= 0.95 * best,
        "err_cloned": pc / mc - 1, "err_pipelined": pp / mp - 1,
        "run_spread": noise,
        "seconds": time.time() - t,
    }
    return row, out


def name(r):
    return f"N1={r['N1']} N2={r['N2']} S={r['S']}"


def rates(r):
    return (f"measured {r['meas_cloned_mpps']:.3g} / {r['meas_pipelined_mpps']:.3g}, "
            f"predicted {r['pred_cloned_mpps']:.3g} / {r['pred_pipelined_mpps']:.3g}")


def print_table(rows):
    print("| N1 | N2 | S | measured cloned / pipelined | predicted cloned / pipelined | model "
          "| measured winner | choice loss | ok | final (trial) | ok | err cloned / pipelined "
          "| spread |")
    print("|----|----|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['N1']} | {r['N2']} | {r['S']} "
              f"| {r['meas_cloned_mpps']:.3g} / {r['meas_pipelined_mpps']:.3g} "
              f"| {r['pred_cloned_mpps']:.3g} / {r['pred_pipelined_mpps']:.3g} "
              f"| {r['plan_choice']} | {r['meas_winner']} | {r['choice_loss']:.0%} "
              f"| {'yes' if r['match'] else '**no**'} "
              f"| {r['final_choice']}{' (trial)' if r['tried'] else ''} "
              f"| {'yes' if r['final_match'] else '**no**'} "
              f"| {r['err_cloned']:+.0%} / {r['err_pipelined']:+.0%} | {r['run_spread']:.0%} |")
    print("\n(Mpps, cloned / pipelined. Model: the better predicted of the two; choice loss: how "
          "much slower it measured than the measured best; ok: within 5% of it. Final: the "
          "planner's choice after its trial, where it ran one; err: predicted / measured - 1; "
          "spread: (max - min) / median of the runs, the worse of the two placements.)")


def print_confusion(rows):
    print("\n| planner chose, measured winner: | cloning | pipelining |")
    print("|---|---|---|")
    for c in KINDS:
        n = [sum(r["plan_choice"] == c and r["meas_winner"] == w for r in rows) for w in KINDS]
        print(f"| {c} | {n[0]} | {n[1]} |")
    exact = sum(r["plan_choice"] == r["meas_winner"] for r in rows)
    near = sum(r["match"] and r["plan_choice"] != r["meas_winner"] for r in rows)
    print(f"\nThe choice is the measured winner at {exact} points, and within 5% of it at "
          f"{near} more.")


def main():
    t0 = time.time()
    la0 = open("/proc/loadavg").read().split()[0]
    rows, plan_head = [], None
    for n1, n2, s in POINTS:
        row, out = measure_point(n1, n2, s)
        plan_head = plan_head or out
        rows.append(row)
        print(f"{name(row):<24} {rates(row)}  {row['plan_choice']:<10} "
              f"{'ok' if row['match'] else 'MISS'}  final {row['final_choice']}"
              f"{' (trial)' if row['tried'] else ''} {'ok' if row['final_match'] else 'MISS'}  "
              f"spread {row['run_spread']:.0%}  "
              f"{row['seconds']:.1f} s", file=sys.stderr, flush=True)
    la1 = open("/proc/loadavg").read().split()[0]

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "grid.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})

    print_table(rows)
    print_confusion(rows)
    matches = sum(r["match"] for r in rows)
    final = sum(r["final_match"] for r in rows)
    tried = sum(r["tried"] for r in rows)
    errs = [abs(r[k]) for r in rows for k in ("err_cloned", "err_pipelined")]
    print(f"\n**Summary: the model's choice matches at {matches} of {len(rows)} points "
          f"({matches / len(rows):.0%}); the planner's final choice at {final} "
          f"({final / len(rows):.0%}; a trial ran at {tried}); median |predicted/measured - 1| "
          f"over all {len(errs)} rates {statistics.median(errs):.1%} (max {max(errs):.1%}).**")
    misses = [r for r in rows if not (r["match"] and r["final_match"])]
    print(f"\nMisses of the model or the final choice ({len(misses)}):" if misses
          else "\nMisses: none.")
    for r in misses:
        print(f"- {name(r)}: model {r['plan_choice']}{'' if r['match'] else ' (miss)'}, final "
              f"{r['final_choice']}{' (trial)' if r['tried'] else ''}"
              f"{'' if r['final_match'] else ' (miss)'}, measured {r['meas_winner']}; "
              f"{rates(r)} Mpps; spread {r['run_spread']:.0%}")
    machine = next((l for l in plan_head.splitlines() if l.startswith("B = ")), "?")
    print(f"\n(load average {la0} before, {la1} after; {time.time() - t0:.0f} s in all; "
          f"machine: {machine})")


if __name__ == "__main__":
    main()
