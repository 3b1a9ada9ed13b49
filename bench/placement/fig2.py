#!/usr/bin/env python3
"""Figure 2 of Dobrescu et al. (PRESTO 2010, §3.1) on this machine: the benefit of pipelining
over cloning (pipelined packets/s divided by cloned packets/s) of the two-element chain, as the
array size S grows, measured and as `sluice plan` predicts it, on two threads.

Cases:
- N = 200 and N = 20 random reads per packet in each element (bench/placement/two-loads.click):
  measured with `sluice bench scaling --threads 2 --load N,S,0 load` (static columns), predicted
  with `sluice plan bench/placement/two-loads.click -j 2 N=.. S=.. CYCLES=0`;
- imbalance, N1 = 396 and N2 = 4 (bench/placement/two-loads-imbalanced.click): `bench scaling`
  takes one N for both stages, so the cloned and pipelined configurations are built here as that
  section builds them (two pinned copies; or two stages across a ThreadSafeQueue(4096)) and run
  with `sluice -j 2`, the rate read from an AverageCounter before each Discard.

Usage: bench/placement/fig2.py [SLUICE]
  SLUICE: the binary (default $SLUICE, else target/release/sluice under the repository root).
Environment: FIG2_QUICK=1 (two sizes, few packets: a smoke test), FIG2_OUT=DIR (where
fig2.csv and fig2.png go; default bench/placement), MACHINE (plan --machine FILE).
Writes fig2.csv and fig2.png, and prints the table and a summary.
"""

import csv
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUICK = os.environ.get("FIG2_QUICK") == "1"
OUT = os.environ.get("FIG2_OUT", HERE)

SIZES = ["64K", "128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M", "32M", "64M"]
IMB_SIZES = ["1M", "6M", "16M", "64M"]
# `bench scaling --packets P`: each run of the load section sends P/4 packets per source, so
# P/2 packets per configuration on two threads; sized for runs of about 0.1 to 0.3 s.
PACKETS = {200: 240_000, 20: 2_000_000}
RUNS = 3
IMB = (396, 4)
IMB_LIMIT = 40_000  # packets per source in one imbalance run
if QUICK:
    SIZES, IMB_SIZES = ["128K", "16M"], ["6M"]
    PACKETS = {200: 20_000, 20: 100_000}
    IMB_LIMIT = 5_000


def size_bytes(s):
    mul = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1], 1)
    return int(s.rstrip("KMG")) * mul


def sluice_binary():
    b = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SLUICE")
    b = b or os.path.join(ROOT, "target", "release", "sluice")
    if not os.access(b, os.X_OK):
        sys.exit(f"fig2.py: no sluice binary at {b} (build it: cargo build --release -p sluice-cli)")
    return b


SLUICE = sluice_binary()


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([SLUICE] + args, capture_output=True, text=True, env=e, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"fig2.py: sluice {' '.join(args)} failed:\n{p.stderr}")
    return p.stdout, p.stderr


CAND = re.compile(r"^\s*\d+\.\s+(cloning|pipelining|mix|subset)\s+([0-9.]+|inf)\s+(.*)$")
# The pipelined placement `bench scaling` measures: the source and the first load on one
# group, the second load and the Discard on the other.
MEASURED_CUT = "[src..a] g0 | [b..d] g1"


def plan(config, defines):
    args = ["plan", config, "-j", "2"] + [f"{k}={v}" for k, v in defines.items()]
    if os.environ.get("MACHINE"):
        args += ["--machine", os.environ["MACHINE"]]
    out, _ = run(args)
    best = {}
    top = None
    section = None
    for line in out.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        m = CAND.match(line)
        if section == "candidates" and m:
            kind, rate, where = m.group(1), float(m.group(2)) * 1e6, m.group(3).strip()
            top = top or kind
            best.setdefault(kind, (rate, where))
            if kind == "pipelining" and where == MEASURED_CUT:
                best["cut"] = (rate, where)
    if "cloning" not in best or "cut" not in best:
        sys.exit(f"fig2.py: plan output without the cloned and a|b pipelined candidates:\n{out}")
    # The best pipelining candidate, when it is another cut ([src..b] | [d]), is not what is
    # measured; it is reported in plan_best_pipe.
    other = "" if best["pipelining"][1] == MEASURED_CUT else best["pipelining"][1]
    return best["cloning"][0], best["cut"][0], top, other, out


CELL = re.compile(r"([0-9.]+) Mpps x[0-9.]+(?: d([0-9]+)%)?")
RUNLINE = re.compile(r"^run: 2 threads, ([0-9.eE+-]+) s")


def spread(times):
    """(max - min) / median of the measured runs."""
    return (max(times) - min(times)) / statistics.median(times) if times else float("nan")


def bench(n, s):
    out, err = run(
        ["bench", "scaling", "--threads", "2", "--runs", str(RUNS), "--packets",
         str(PACKETS[n]), "--load", f"{n},{s},0", "load"],
        env={"SLUICE_SCALING_DEBUG": "1"},
    )
    row = next((l for l in out.splitlines() if l.split()[:1] == ["2"]), None)
    cells = CELL.findall(row or "")
    if len(cells) != 4:
        sys.exit(f"fig2.py: unexpected bench scaling output:\n{out}")
    cloned, piped = float(cells[0][0]) * 1e6, float(cells[2][0]) * 1e6
    drops = int(cells[2][1] or 0)
    # SLUICE_SCALING_DEBUG: one line per run, per configuration one warm-up then RUNS runs,
    # in the order cloned static, cloned automatic, pipelined static, pipelined automatic.
    times = [float(m.group(1)) for m in map(RUNLINE.match, err.splitlines()) if m]
    k = RUNS + 1
    noise = max(spread(times[1:k]), spread(times[2 * k + 1:3 * k])) if len(times) == 4 * k else float("nan")
    return cloned, piped, drops, noise


def imb_configs(n1, n2, s, limit):
    src = f"InfiniteSource(LENGTH 64, LIMIT {limit}, BURST 32, STOP true, TIMESTAMP false)"
    ld = lambda n, seed: f"SyntheticLoad({n}, {s}, CYCLES 0, SEED {seed})"
    ac = "AverageCounter(IGNORE 0.02)"
    cloned = "".join(
        f"s{k} :: {src} -> {ld(n1, 2 * k + 1)} -> {ld(n2, 2 * k + 2)} -> ac{k} :: {ac} -> Discard;\n"
        for k in range(2)
    ) + "StaticThreadSched(s0 0, s1 1);\n"
    src2 = src.replace(f"LIMIT {limit}", f"LIMIT {2 * limit}")
    piped = (
        f"s0 :: {src2} -> {ld(n1, 1)} -> ThreadSafeQueue(4096) -> u0 :: Unqueue -> "
        f"{ld(n2, 2)} -> ac0 :: {ac} -> Discard;\nStaticThreadSched(s0 0, u0 1);\n"
    )
    return cloned, piped


def avg_rate(text, counters):
    args = ["-j", "2", "-e", text]
    for c in counters:
        args += ["-h", f"{c}.rate"]
    out, _ = run(args)
    nums = [float(x) for x in re.findall(r"^([0-9.]+)\s*$", out, re.M)]
    if len(nums) != len(counters):
        sys.exit(f"fig2.py: unexpected handler output:\n{out}")
    return sum(nums)


def measure_imbalance(n1, n2, s):
    cl_text, pl_text = imb_configs(n1, n2, s, IMB_LIMIT)
    cl, pl = [], []
    for _ in range(RUNS):  # alternate, so that a change in the neighbours' load hits both
        cl.append(avg_rate(cl_text, ["ac0", "ac1"]))
        pl.append(avg_rate(pl_text, ["ac0"]))
    rates_spread = max(spread([1 / r for r in cl]), spread([1 / r for r in pl]))
    return statistics.median(cl), statistics.median(pl), 0, rates_spread


def steal_and_busy():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) for x in f]
    return v[7] if len(v) > 7 else 0, sum(v)


def main():
    t0 = time.time()
    la0 = open("/proc/loadavg").read().split()[0]
    st0, tot0 = steal_and_busy()
    two = os.path.join(ROOT, "bench", "placement", "two-loads.click")
    imb = os.path.join(ROOT, "bench", "placement", "two-loads-imbalanced.click")
    cases = [(f"N={n}", n, n, s) for n in (200, 20) for s in SIZES]
    cases += [(f"N1={IMB[0]},N2={IMB[1]}", IMB[0], IMB[1], s) for s in IMB_SIZES]
    rows = []
    plan_head = None
    for case, n1, n2, s in cases:
        t = time.time()
        if n1 == n2:
            pc, pp, top, other, out = plan(two, {"N": n1, "S": s, "CYCLES": 0})
            mc, mp, drops, noise = bench(n1, s)
        else:
            pc, pp, top, other, out = plan(imb, {"N1": n1, "N2": n2, "S": s, "CYCLES": 0})
            mc, mp, drops, noise = measure_imbalance(n1, n2, s)
        plan_head = plan_head or out
        choice = "pipelining" if pp > pc else "cloning"
        chosen, best = (mp if choice == "pipelining" else mc), max(mc, mp)
        row = {
            "case": case, "N1": n1, "N2": n2, "S": s, "S_bytes": size_bytes(s),
            "meas_cloned_mpps": mc / 1e6, "meas_pipelined_mpps": mp / 1e6,
            "meas_benefit": mp / mc,
            "pred_cloned_mpps": pc / 1e6, "pred_pipelined_mpps": pp / 1e6,
            "pred_benefit": pp / pc,
            "plan_choice": choice, "plan_top": top, "plan_best_pipe": other,
            "meas_winner": "pipelining" if mp > mc else "cloning",
            "choice_loss": 1 - chosen / best,
            "match": chosen >= 0.95 * best,
            "err_cloned": pc / mc - 1, "err_pipelined": pp / mp - 1,
            "pipe_drops_pct": drops, "run_spread": noise,
            "seconds": time.time() - t,
        }
        rows.append(row)
        print(
            f"{case:<14} S={s:<5} meas {mc/1e6:7.3f} / {mp/1e6:7.3f} = {mp/mc:5.2f}   "
            f"pred {pc/1e6:7.3f} / {pp/1e6:7.3f} = {pp/pc:5.2f}   {choice:<10} "
            f"{'ok' if row['match'] else 'MISS'}  spread {noise:.0%}  {row['seconds']:.1f} s",
            flush=True,
        )
    st1, tot1 = steal_and_busy()
    la1 = open("/proc/loadavg").read().split()[0]
    os.makedirs(OUT, exist_ok=True)
    fields = list(rows[0].keys())
    with open(os.path.join(OUT, "fig2.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
    plot(rows)
    matches = sum(r["match"] for r in rows)
    errs = [abs(r[k]) for r in rows for k in ("err_cloned", "err_pipelined")]
    berr = [abs(r["pred_benefit"] / r["meas_benefit"] - 1) for r in rows]
    print(f"\n# {len(rows)} points, planner's choice is the measured winner or within 5%: "
          f"{matches}/{len(rows)} ({matches / len(rows):.0%})")
    print(f"# |predicted/measured - 1| over all rates: median {statistics.median(errs):.1%}, "
          f"max {max(errs):.1%}; of the benefit: median {statistics.median(berr):.1%}")
    for case in dict.fromkeys(r["case"] for r in rows):
        e = [abs(r[k]) for r in rows if r["case"] == case for k in ("err_cloned", "err_pipelined")]
        print(f"#   {case}: median rate error {statistics.median(e):.1%}")
    sp = [r["run_spread"] for r in rows if r["run_spread"] == r["run_spread"]]
    print(f"# run-to-run spread (max-min)/median of the measured runs, per point: median "
          f"{statistics.median(sp):.0%}, max {max(sp):.0%}")
    print(f"# load average {la0} before, {la1} after; steal {100 * (st1 - st0) / max(1, tot1 - tot0):.1f}% "
          f"of CPU time; {time.time() - t0:.0f} s in all")
    m = re.search(r"^B = .*$", plan_head, re.M)
    print(f"# machine profile: {m.group(0) if m else '?'}")
    for line in plan_head.splitlines():
        if re.match(r"^L[123]\s", line):
            print(f"#   {line}")


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4.2), sharey=True)
    axes = axes if len(cases) > 1 else [axes]
    for ax, case in zip(axes, cases):
        rs = sorted((r for r in rows if r["case"] == case), key=lambda r: r["S_bytes"])
        x = [r["S_bytes"] for r in rs]
        ax.plot(x, [r["meas_benefit"] for r in rs], "o-", color="C0", label="measured")
        ax.plot(x, [r["pred_benefit"] for r in rs], "s--", color="C1", label="predicted (sluice plan)")
        for r in rs:
            if not r["match"]:
                ax.plot(r["S_bytes"], r["meas_benefit"], "x", color="red", ms=10, mew=2)
        ax.axhline(1.0, color="black", lw=0.8)
        # Where the arrays stop fitting: per core 2S (cloned) or S (pipelined) in a 1 MB L2;
        # 4S (cloned) or 2S (pipelined) in the shared 32 MB L3.
        for b, lab in [(512 << 10, "2S=L2"), (1 << 20, "S=L2"), (8 << 20, "4S=L3"), (16 << 20, "2S=L3")]:
            if x[0] <= b <= x[-1]:
                ax.axvline(b, color="grey", ls=":", lw=0.8)
                ax.text(b, 1.02, lab, transform=ax.get_xaxis_transform(), ha="center", fontsize=7, color="grey")
        ax.set_xscale("log", base=2)
        ax.set_xticks(x)
        ax.set_xticklabels([r["S"] for r in rs], rotation=45, fontsize=8)
        ax.set_xlabel("S, array bytes per element")
        ax.set_title(case.replace("N=", "N = ").replace(",", ", ") + (" per element" if "N1" not in case else ""),
                     pad=14)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("benefit = pipelined / cloned packets/s")
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle("Benefit of pipelining over cloning, 2 threads (1 MB L2 per core, 32 MB shared L3); x: planner's choice >5% off",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "fig2.png"), dpi=110)


if __name__ == "__main__":
    main()
