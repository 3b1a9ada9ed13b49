#!/usr/bin/env python3
"""Summarises and plots soak runs (bench/soak/run.sh) and judges whether memory stayed flat.

Each run is LABEL=SAMPLES.csv:PING.log (sample.py's CSV; `ping -D` output of the latency
probe). For each run it prints the offered and forwarded rates, loss, Sluice's counted drops,
resident memory after the warm-up and at the end, the memory growth, and latency percentiles;
it plots memory, forwarding rate and drops, and latency over time into PLOT.png.

Memory is flat when the peak resident memory of the run's second half exceeds the peak of its
first half (after WARMUP seconds) by at most SLACK_KB: a router whose memory grows with the
traffic it has carried fails, one that reached its working set early passes. Exits 1 if any
run is not flat or forwarded nothing.

Usage: report.py PLOT.png WARMUP SLACK_KB LABEL=SAMPLES.csv:PING.log...
"""
import csv
import re
import sys

RATE_WINDOW = 5
PING = re.compile(r"^\[(\d+\.\d+)\].*time=([\d.]+) ms")


def load(samples, pings):
    rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(samples))]
    lat = []
    for line in open(pings):
        m = PING.match(line)
        if m:
            lat.append((float(m.group(1)), float(m.group(2))))
    if lat:
        t0 = lat[0][0]
        lat = [(t - t0, ms) for t, ms in lat]
    return rows, lat


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def judge(label, rows, lat, warmup, slack):
    if len(rows) < 3:
        print(f"{label}: too few samples ({len(rows)})")
        return False
    first, last = rows[0], rows[-1]
    secs = last["t"] - first["t"]
    offered = last["offered"] + last["gen_dropped"] - first["offered"] - first["gen_dropped"]
    fwd = min(last["forwarded"] - first["forwarded"], offered)
    drops = last["sluice_drops"] - first["sluice_drops"]
    loss = 100.0 * (offered - fwd) / offered if offered else 100.0
    steady = [r for r in rows if r["t"] >= warmup]
    if len(steady) < 2:
        steady = rows[len(rows) // 2:]
    mid = steady[0]["t"] + (steady[-1]["t"] - steady[0]["t"]) / 2
    peak1 = max(r["rss_kb"] for r in steady if r["t"] <= mid)
    peak2 = max(r["rss_kb"] for r in steady if r["t"] >= mid)
    growth = peak2 - peak1
    flat = growth <= slack
    ms = [m for _, m in lat]
    print(f"{label}: {secs:.0f} s, offered {offered / secs:.0f} pps, forwarded {fwd / secs:.0f} pps, "
          f"loss {loss:.3f} %, Sluice drops {drops:.0f}; RSS {steady[0]['rss_kb'] / 1024:.1f} MiB "
          f"after warm-up, {last['rss_kb'] / 1024:.1f} MiB at the end, second-half peak - "
          f"first-half peak = {growth:+.0f} kB ({'flat' if flat else 'GROWING'}); latency "
          f"p50 {pct(ms, 50):.3f} ms, p99 {pct(ms, 99):.3f} ms, max {max(ms, default=float('nan')):.3f} ms "
          f"({len(ms)} probes)")
    return flat and fwd > 0


def plot(path, runs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    for label, rows, lat in runs:
        t = [r["t"] for r in rows]
        ax[0].plot(t, [r["rss_kb"] / 1024 for r in rows], label=label)
        # Rates over windows of RATE_WINDOW samples: a sample taken late (a busy machine)
        # would otherwise show as a spike.
        w = RATE_WINDOW
        rate = [(rows[i]["forwarded"] - rows[i - w]["forwarded"]) / max(t[i] - t[i - w], 1e-9) / 1e3
                for i in range(w, len(rows))]
        ax[1].plot(t[w:], rate, label=label)
        ax[2].plot(t, [r["sluice_drops"] - rows[0]["sluice_drops"] for r in rows], label=label)
        ax[3].plot([x for x, _ in lat], [m for _, m in lat], ".", markersize=2, label=label)
    ax[0].set_ylabel("RSS (MiB)")
    ax[0].set_ylim(0, 1.25 * max(r["rss_kb"] / 1024 for _, rows, _ in runs for r in rows))
    ax[1].set_ylabel("forwarded (kpps)")
    ax[2].set_ylabel("Sluice drops")
    ax[3].set_ylabel("ping RTT (ms)")
    ax[3].set_yscale("log")
    ax[3].set_xlabel("time (s)")
    for a in ax:
        a.legend(fontsize=8)
    ax[0].set_title("Soak: Figure 8 router between namespaces", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print("plot:", path)


def main():
    out, warmup, slack = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    runs, ok = [], True
    for arg in sys.argv[4:]:
        label, files = arg.split("=", 1)
        samples, pings = files.split(":", 1)
        rows, lat = load(samples, pings)
        ok &= judge(label, rows, lat, warmup, slack)
        runs.append((label, rows, lat))
    plot(out, runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
