#!/usr/bin/env bash
# Predicted (sluice plan) against measured (sluice bench scaling load) rates of the two-load
# chain (two-loads.click: two SyntheticLoad(N, S) per packet), cloned and pipelined on two
# threads, for each array size S.
#
# Usage: bench/placement/validate.sh [S...]        (default: 128K 4M 64M)
# Environment: SLUICE (binary; default: build target/release/sluice), N (reads per element,
# default 200), RUNS (bench runs per figure, default 3), PACKETS (bench --packets, default
# 400000), MACHINE (plan --machine FILE).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
if [ -z "${SLUICE:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  cargo build -q --release -p sluice-cli
  SLUICE="$CARGO_TARGET_DIR/release/sluice"
fi
N="${N:-200}"
RUNS="${RUNS:-3}"
PACKETS="${PACKETS:-400000}"
PLAN_ARGS=()
[ -n "${MACHINE:-}" ] && PLAN_ARGS=(--machine "$MACHINE")
[ $# -eq 0 ] && set -- 128K 4M 64M

echo "# $(date -u +%FT%TZ) $(hostname): $SLUICE, N=$N, two threads, load average $(cut -d' ' -f1 /proc/loadavg)"
printf '%-6s %-11s %12s %12s %12s %12s\n' S choice "pred clone" "pred pipe" "meas clone" "meas pipe"
for S in "$@"; do
  plan="$("$SLUICE" plan "$ROOT/bench/placement/two-loads.click" -j 2 "N=$N" "S=$S" "${PLAN_ARGS[@]}" 2>/dev/null)"
  # Candidate lines: "  1. cloning       2.283  [src..d] g0+g1".
  pc=$(awk '$2 == "cloning" { print $3; exit }' <<<"$plan")
  pp=$(awk '$2 == "pipelining" { print $3; exit }' <<<"$plan")
  choice=$(awk '/^## choice/ { getline; print $1; exit }' <<<"$plan")
  # Bench row for two threads: cloned static, cloned automatic, pipelined static, ...
  row=$("$SLUICE" bench scaling --threads 2 --runs "$RUNS" --packets "$PACKETS" --load "$N,$S,0" load | awk '$1 == "2"')
  mc=$(awk '{ print $2 }' <<<"$row")
  mp=$(awk '{ print $8 }' <<<"$row")
  printf '%-6s %-11s %12s %12s %12s %12s\n' "$S" "$choice" "$pc" "$pp" "$mc" "$mp"
done
echo "(Mpps; predicted: the best cloned and pipelined placements of sluice plan; measured: bench scaling's static columns, median of $RUNS runs)"
