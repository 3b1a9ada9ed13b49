#!/usr/bin/env python3
"""RouteBricks Figure 3 from `sluice cluster plan --figure3`.

Plots the servers needed to build an N-port router (R = 10 Gb/s per port) for each built-in
server profile, and the cost of the switched cluster of 48-port switches in server-equivalents,
on log-log axes. Writes fig3.csv (the planner's output, unchanged) and fig3.png beside this
script.

Usage: bench/cluster/fig3.py [SLUICE] [--max-ports 2048] [--no-plot]

SLUICE is the sluice binary; else $SLUICE; else target/tests/sluice or target/release/sluice
under the repository root (whichever exists, newest first).
"""

import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LABELS = {
    "current": "current servers (1 port, 5 NICs)",
    "more-nics": "more NICs (1 port, 20 NICs)",
    "faster": "faster servers (2 ports, 20 NICs)",
    "today": "today (13 ports, 8 x 2x100G NICs)",
    "switched-48": "48-port switches",
}


def find_sluice(arg):
    if arg:
        return arg
    if os.environ.get("SLUICE"):
        return os.environ["SLUICE"]
    found = [os.path.join(ROOT, "target", p, "sluice") for p in ("tests", "release")]
    found = [p for p in found if os.path.exists(p)]
    if not found:
        sys.exit("fig3.py: no sluice binary; build it (cargo build --release -p sluice-cli) "
                 "or give its path")
    return max(found, key=os.path.getmtime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sluice", nargs="?", help="the sluice binary")
    ap.add_argument("--max-ports", type=int, default=2048)
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args()
    sluice = find_sluice(a.sluice)
    text = subprocess.run([sluice, "cluster", "plan", "--figure3", "--max-ports",
                           str(a.max_ports)], capture_output=True, text=True,
                          check=True).stdout
    with open(os.path.join(HERE, "fig3.csv"), "w") as f:
        f.write(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    series = [c for c in rows[0] if c != "ports" and not c.endswith(" topology")]
    ports = [int(r["ports"]) for r in rows]
    for r in rows:
        print(r["ports"], " ".join(f"{c}={r[c]}" for c in series))
    if a.no_plot:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 5))
    for c in series:
        ys = [int(r[c]) for r in rows]
        if c.startswith("switched"):
            ax.plot(ports, ys, color="black", linestyle="--", marker="x", label=LABELS.get(c, c))
            continue
        line, = ax.plot(ports, ys, label=LABELS.get(c, c))
        # Filled markers: full mesh (or one server); hollow: n-fly.
        topo = [r[f"{c} topology"] for r in rows]
        mesh = [t.startswith("mesh") or t == "single" for t in topo]
        ax.plot([p for p, m in zip(ports, mesh) if m], [y for y, m in zip(ys, mesh) if m],
                "o", color=line.get_color(), markersize=5)
        ax.plot([p for p, m in zip(ports, mesh) if not m],
                [y for y, m in zip(ys, mesh) if not m], "o", color=line.get_color(),
                markerfacecolor="white", markersize=5)
    ax.plot(ports, ports, color="grey", linewidth=0.6, label="N servers (1 per port)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=10)
    ax.set_xticks(ports)
    ax.set_xticklabels([str(p) for p in ports])
    ax.set_xlabel("external router ports N (R = 10 Gb/s)")
    ax.set_ylabel("servers (switch cost: 4 ports = 1 server)")
    ax.set_title("Servers for an N-port router (RouteBricks Fig. 3, sluice cluster plan)\n"
                 "filled: full mesh, hollow: k-ary n-fly", fontsize=10)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fig3.png"), dpi=120)


if __name__ == "__main__":
    main()
