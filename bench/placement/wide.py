#!/usr/bin/env python3
"""The planner on more threads than the 2-core VM has: for the two-element chain
(two-loads-imbalanced.click) at a few (N1, N2, S) points and each thread count, the
candidates `sluice plan` lists are run and measured, and the planner's choices (the model's
first, and the final one after its trial) are compared with the fastest measured.

How, per thread count T and point:
- `sluice plan CONF -j T --no-trial --show-all --top TOP`: the model's ranking and every
  listed candidate written as a configuration. Measured: the model's first, and the best of
  each kind (cloning, pipelining, mix, subset), at most MEASURE of them. Each Discard gets an
  AverageCounter(IGNORE 0.05) in front; the rate is their sum; median of RUNS runs,
  candidates interleaved. The source sends about SECONDS of packets at the model's first
  choice's predicted rate.
- `sluice plan CONF -j T`: the final choice (the trial's where the model could not tell its
  contenders apart). It counts as measured when it is one of the measured candidates.
- A choice matches when it measured at least 95% of the fastest measured candidate.

Usage: bench/placement/wide.py [SLUICE]
  SLUICE: the binary (default $SLUICE, else target/release/sluice under the repository root).
Environment: WIDE_THREADS (default 4,8), WIDE_QUICK=1 (two points, one run: a smoke test),
MACHINE (plan --machine FILE), WIDE_OUT (a file that gets the report as it grows).
Prints a table per thread count and a summary.
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

CONFIG = os.path.join(HERE, "two-loads-imbalanced.click")
QUICK = os.environ.get("WIDE_QUICK") == "1"
THREADS = [int(t) for t in os.environ.get("WIDE_THREADS", "4,8").split(",")]
POINTS = [(20, 20, "128K"), (100, 100, "1M"), (100, 100, "8M"), (20, 20, "8M"),
          (396, 4, "4M"), (200, 200, "32M")]
RUNS, SECONDS, TOP, MEASURE = 3, 0.4, 12, 5
if QUICK:
    POINTS, RUNS, SECONDS = POINTS[:2], 1, 0.1

CAND = re.compile(r"^\s*(\d+)\.\s+(cloning|pipelining|mix|subset|flow split)\s+([0-9.]+|inf)\s+(.*)$")
CONF_HEAD = re.compile(r"^## configuration of candidate (\d+)\. \S+(?: split)? (.*) \(\d+ threads")
TRIED = re.compile(r"^\s*(\d+)\.\s+.*\(chosen\)$")
SINK = re.compile(r"-> (\w+) :: Discard\b")


SLUICE = sluice_binary()
REPORT = open(os.environ["WIDE_OUT"], "a") if os.environ.get("WIDE_OUT") else None


def say(line=""):
    print(line, flush=True)
    if REPORT:
        REPORT.write(line + "\n")
        REPORT.flush()


def sluice(args, timeout=300):
    p = subprocess.run([SLUICE] + args, capture_output=True, text=True, cwd=ROOT,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"sluice {' '.join(args[:6])} ...: {p.stderr.strip()[-400:]}")
    return p.stdout


def plan_args(t, n1, n2, s):
    a = ["plan", CONFIG, "-j", str(t), f"N1={n1}", f"N2={n2}", f"S={s}", "CYCLES=0"]
    if os.environ.get("MACHINE"):
        a += ["--machine", os.environ["MACHINE"]]
    return a


def candidates(out):
    """Ranked candidates: {number: (kind, predicted Mpps, stages)} and written configurations."""
    cands, confs, cur = {}, {}, None
    section = None
    for line in out.splitlines():
        h = CONF_HEAD.match(line)
        if h:
            cur = int(h[1])
            confs[cur] = []
            continue
        if line.startswith("## "):
            section, cur = line[3:].strip(), None
            continue
        if cur is not None:
            confs[cur].append(line)
        elif section == "candidates":
            m = CAND.match(line)
            if m:
                cands[int(m[1])] = (m[2], float(m[3]), m[4].strip())
    return cands, {k: "\n".join(v) + "\n" for k, v in confs.items()}


def counted(text, packets):
    """`text` with an AverageCounter before each Discard and its source LIMITs set so that
    `packets` are sent in all; the counters' names."""
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")) + "\n"
    names = SINK.findall(text)
    text = SINK.sub(lambda m: f"-> {m[1]}_ac :: AverageCounter(IGNORE 0.05) -> {m[1]} :: Discard",
                    text)
    limits = [int(x) for x in re.findall(r"LIMIT (\d+)", text)]
    total = sum(limits) or 1
    text = re.sub(r"LIMIT (\d+)", lambda m: f"LIMIT {max(1, int(m[1]) * packets // total)}", text)
    return text, [f"{n}_ac" for n in names]


def rate(t, text, acs):
    args = ["-j", str(t), "-e", text]
    for a in acs:
        args += ["-h", f"{a}.rate"]
    out = sluice(args)
    return sum(float(x) for x in re.findall(r"^([0-9.]+)\s*$", out, re.M))


def point(t, n1, n2, s):
    model_out = sluice(plan_args(t, n1, n2, s) + ["--no-trial", "--show-all", "--top", str(TOP)])
    cands, confs = candidates(model_out)
    first = min(cands)
    chosen = [first]
    for kind in ("cloning", "pipelining", "mix", "subset"):
        k = next((k for k in sorted(cands) if cands[k][0] == kind), None)
        if k is not None and k not in chosen:
            chosen.append(k)
    chosen = [k for k in chosen if k in confs][:MEASURE]
    packets = int(max(50_000, cands[first][1] * 1e6 * SECONDS))
    texts = {k: counted(confs[k], packets) for k in chosen}
    rates = {k: [] for k in chosen}
    for _ in range(RUNS):
        for k in chosen:
            rates[k].append(rate(t, *texts[k]))
    measured = {k: statistics.median(v) for k, v in rates.items()}
    final_out = sluice(plan_args(t, n1, n2, s))
    m = next((m for m in map(TRIED.match, final_out.splitlines()) if m), None)
    final_cands, _ = candidates(final_out)
    if m:
        final_key = final_cands[int(m[1])][0::2]
    else:
        final_key = final_cands[min(final_cands)][0::2]
    final = next((k for k in chosen if cands[k][0::2] == final_key), None)
    return cands, measured, first, final, final_key, bool(m)


def main():
    t0 = time.time()
    say(f"# wide.py: {os.cpu_count()} CPUs, threads {THREADS}, {RUNS} runs, "
        f"load average {os.getloadavg()[0]:.2f}")
    summary = []
    for t in THREADS:
        say(f"\n## {t} threads\n")
        say("| N1 | N2 | S | candidate | predicted | measured | err | |")
        say("|---|---|---|---|---|---|---|---|")
        for n1, n2, s in POINTS:
            try:
                cands, measured, first, final, final_key, tried = point(t, n1, n2, s)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                say(f"| {n1} | {n2} | {s} | failed: {str(e)[-300:]} | | | | |")
                continue
            best = max(measured.values())
            for k, r in measured.items():
                kind, pred, where = cands[k]
                where = where.replace("|", "\\|")
                mark = []
                if k == first:
                    mark.append("model")
                if k == final:
                    mark.append("final (trial)" if tried else "final")
                if r == best:
                    mark.append("fastest")
                say(f"| {n1} | {n2} | {s} | {k}. {kind} {where} | {pred:.3g} | {r / 1e6:.3g} "
                    f"| {pred * 1e6 / r - 1:+.0%} | {', '.join(mark)} |")
            if final is None:
                say(f"| {n1} | {n2} | {s} | final choice {' '.join(final_key)} (trial: {tried}) "
                    f"was not measured | | | | |")
            model_ok = measured[first] >= 0.95 * best
            final_ok = final is not None and measured[final] >= 0.95 * best
            errs = [abs(cands[k][1] * 1e6 / r - 1) for k, r in measured.items()]
            summary.append((t, model_ok, final_ok, tried, errs))
    say("\n| threads | points | model's choice within 5% | final choice within 5% | trials "
        "| median error |")
    say("|---|---|---|---|---|---|")
    for t in THREADS:
        rows = [r for r in summary if r[0] == t]
        if not rows:
            continue
        errs = [e for r in rows for e in r[4]]
        say(f"| {t} | {len(rows)} | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} "
            f"| {sum(r[3] for r in rows)} | {statistics.median(errs):.0%} |")
    say(f"\n({time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
