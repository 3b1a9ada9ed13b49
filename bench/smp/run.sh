#!/usr/bin/env bash
# bench/smp/run.sh -- SMP scaling figures, unattended.
#
# Usage: bench/smp/run.sh [THREADS] [PACKETS] [RUNS] [SECTIONS...]
#   THREADS   comma-separated thread counts (default: 1 up to the number of cores, doubling:
#             1,2,4,8,... plus the core count)
#   PACKETS   packets per source per run (default 2000000)
#   RUNS      runs per figure, the median is printed (default 5)
#   SECTIONS  clone-min clone-ip load stages crossing (default: all)
# Environment: SLUICE=path/to/sluice to skip the build; LOAD=N,S,CYCLES for the load section.
#
# Builds sluice in release mode (own target dir), prints the machine, then the tables of
# `sluice bench scaling`, and keeps a copy in bench/smp/results-<host>-<date>.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cores="$(nproc)"
if [ $# -ge 1 ] && [ -n "$1" ]; then
    threads="$1"
else
    threads=""; t=1
    while [ "$t" -lt "$cores" ]; do threads="$threads$t,"; t=$((t * 2)); done
    threads="$threads$cores"
fi
packets="${2:-2000000}"
runs="${3:-5}"
shift $(( $# > 3 ? 3 : $# )) || true
sections=("$@")
if [ -z "${SLUICE:-}" ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target-smp}"
    (cd "$root" && cargo build --release -q -p sluice-cli)
    SLUICE="$CARGO_TARGET_DIR/release/sluice"
fi
load=()
if [ -n "${LOAD:-}" ]; then load=(--load "$LOAD"); fi
out="$here/results-$(hostname)-$(date +%Y%m%d-%H%M%S).txt"
{
    echo "# $(date -u +%FT%TZ) $(hostname): $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "# $SLUICE bench scaling --threads $threads --packets $packets --runs $runs ${load[*]} ${sections[*]}"
    "$SLUICE" bench scaling --threads "$threads" --packets "$packets" --runs "$runs" "${load[@]}" "${sections[@]}"
} 2>&1 | tee "$out"
echo "# saved in $out"
