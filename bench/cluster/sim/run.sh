#!/usr/bin/env bash
# bench/cluster/sim/run.sh -- the Direct VLB simulation figures of bench/cluster/README.md.
#
# Usage: bench/cluster/sim/run.sh [SCENARIO...]
#   SCENARIO  rb4 n4-uniform n32-one n32-one-burst100us n32-one-burst10ms n32-uniform
#             n32-hotspot p1024-uniform p1024-one p1024-hotspot (default: all)
# Environment: SLUICE=path/to/sluice to skip the build; JSON=1 to run each scenario a second
# time for its JSON (SCENARIO.json).
#
# Each scenario is one `sluice cluster sim` command (printed first); its text output goes to
# stdout and to bench/cluster/sim/results/SCENARIO.txt. Runs are
# deterministic (seed 1), so the numbers repeat exactly on any machine; only the wall-clock
# times differ.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if [ -z "${SLUICE:-}" ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
    cargo build -q --release -p sluice-cli
    SLUICE="$CARGO_TARGET_DIR/release/sluice"
fi
out="$here/results"
mkdir -p "$out"

declare -A args=(
    # RB4's reordering experiment: everything from one input port to one output port.
    [rb4]="--nodes 4 --matrix one-to-one --flowlets 100ms,10ms,1ms,100us,10us,off"
    [n4-uniform]="--nodes 4 --matrix uniform --flowlets 100ms,off"
    [n32-one]="--nodes 32 --matrix one-to-one --flowlets 100ms,1ms,100us,10us,off"
    # The VLB meters' depth (default 1 ms at the link rate): shallower moves more flowlets,
    # deeper lets longer queues build before a flowlet moves (DirectVLB's default is 10 ms).
    [n32-one-burst100us]="--nodes 32 --matrix one-to-one --flowlets 100ms --burst 100us"
    [n32-one-burst10ms]="--nodes 32 --matrix one-to-one --flowlets 100ms --burst 10ms"
    [n32-uniform]="--nodes 32 --matrix uniform --duration 100ms --flowlets 100ms,100us,off"
    [n32-hotspot]="--nodes 32 --matrix hotspot --duration 100ms --flowlets 100ms,100us,off"
    # 1024 ports of 10 Gb/s: 64 nodes of 16 ports (DirectVLB handles 64 nodes at most).
    [p1024-uniform]="--ports 1024 --matrix uniform --duration 5ms --flowlets 100ms,off"
    [p1024-one]="--ports 1024 --matrix one-to-one --flowlets 100ms,100us,off"
    [p1024-hotspot]="--ports 1024 --matrix hotspot --duration 5ms --flowlets 100ms,off"
)
order=(rb4 n4-uniform n32-one n32-one-burst100us n32-one-burst10ms n32-uniform n32-hotspot
    p1024-uniform p1024-one p1024-hotspot)
if [ $# -gt 0 ]; then order=("$@"); fi

for s in "${order[@]}"; do
    a="${args[$s]:-}"
    if [ -z "$a" ]; then
        echo "unknown scenario $s" >&2
        exit 2
    fi
    echo "== $s: sluice cluster sim $a"
    # shellcheck disable=SC2086
    "$SLUICE" cluster sim $a | tee "$out/$s.txt"
    if [ "${JSON:-0}" = 1 ]; then
        # shellcheck disable=SC2086
        "$SLUICE" cluster sim $a --json >"$out/$s.json"
    fi
    echo
done
