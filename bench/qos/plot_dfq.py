"""Plots the DFQ benchmark (crates/elements/examples/dfq_bench.rs) as Figures 8, 9 and 10.

Usage: python bench/qos/plot_dfq.py RESULTS.csv  (the benchmark's standard output)
Writes dfq_fig8_bytes.png, dfq_fig9_packets.png and dfq_fig10_flows.png next to this script.
"""
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(path):
    fig10 = defaultdict(dict)
    fig89 = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        f = line.split(",")
        if f[0] == "fig10":
            fig10[int(f[2])][int(f[1])] = float(f[3])
        elif f[0] == "fig89":
            label = "FIFO" if f[1] == "fifo" else f"DFQ, quantum {f[2]} B"
            fig89[label][int(f[3])] = (float(f[4]), float(f[5]))

    for idx, ylabel, name in [(1, "bytes/s", "dfq_fig8_bytes.png"),
                              (0, "packets/s", "dfq_fig9_packets.png")]:
        plt.figure(figsize=(6, 4))
        for label, pts in fig89.items():
            sizes = sorted(pts)
            plt.plot(sizes, [pts[s][idx] for s in sizes], marker="o", label=label)
        plt.xlabel("packet size (bytes)")
        plt.ylabel(ylabel)
        plt.title(f"FIFO vs DFQ (sched + demux), {ylabel}")
        plt.legend()
        plt.grid(alpha=0.3)
        plt.tight_layout()
        plt.savefig(HERE / name, dpi=100)
        plt.close()

    plt.figure(figsize=(6, 4))
    for q, pts in sorted(fig10.items()):
        flows = sorted(pts)
        plt.plot(flows, [pts[n] for n in flows], marker="o", label=f"quantum {q} B")
    plt.xscale("log")
    plt.ylim(bottom=0)
    plt.xlabel("flows (128-byte packets)")
    plt.ylabel("packets/s")
    plt.title("DFQSched packet rate vs number of flows")
    plt.legend()
    plt.grid(alpha=0.3)
    plt.tight_layout()
    plt.savefig(HERE / "dfq_fig10_flows.png", dpi=100)
    plt.close()


if __name__ == "__main__":
    main(sys.argv[1])
