#!/usr/bin/env bash
# Fuzzing campaign over the cargo-fuzz targets in fuzz/ (run by hand; not part of CI).
#
# Usage: scripts/fuzz-campaign.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Builds the targets (installing cargo-fuzz if missing), then runs each target in turn, one
# libFuzzer process at a time, for SECONDS_PER_TARGET seconds (default 60) over its corpus in
# fuzz/corpus/TARGET. New inputs found in the run are merged into that corpus with libFuzzer's
# `-merge=1`, which keeps only those that add coverage. Crash, leak, timeout and out-of-memory
# inputs are left in fuzz/artifacts/TARGET. Prints one line per target: executions, exec/s,
# corpus entries added, corpus size and crashes found. Exits 1 if any target crashed.
#
# Environment: FUZZ_SANITIZER (address, the default, or none: faster, but misses memory errors
# in unsafe code), FUZZ_TIMEOUT (seconds one input may run before it counts as a hang; 10),
# FUZZ_RUNS (stop a target after this many executions, whichever comes first: `FUZZ_RUNS=10000000
# scripts/fuzz-campaign.sh 3600` runs each target to ten million executions or an hour),
# FUZZ_MAX_LEN (longest input libFuzzer generates; by default it grows with the corpus, and
# long configurations and scripts slow the language targets down tenfold).
set -uo pipefail

secs=${1:-60}
shift || true
sanitizer=${FUZZ_SANITIZER:-address}
timeout=${FUZZ_TIMEOUT:-10}
runs=${FUZZ_RUNS:--1}
max_len=()
[ -n "${FUZZ_MAX_LEN:-}" ] && max_len=(-max_len="$FUZZ_MAX_LEN")

cd "$(dirname "$0")/../fuzz" || exit 2

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz not found; installing it" >&2
    cargo install cargo-fuzz || exit 2
fi

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# `cargo fuzz build` takes at most one target; with several, build them all.
build=(cargo +nightly fuzz build --sanitizer "$sanitizer")
if [ ${#targets[@]} -eq 1 ]; then
    build+=("${targets[0]}")
fi
"${build[@]}" >&2 || exit 2

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

crashed=0
printf '%-20s %12s %9s %7s %8s %8s\n' target executions exec/s added corpus crashes
for t in "${targets[@]}"; do
    corpus=corpus/$t
    artifacts=artifacts/$t
    mkdir -p "$corpus" "$artifacts"
    fresh=$logdir/$t.new
    mkdir -p "$fresh"
    ls "$artifacts" | sort >"$logdir/$t.artifacts.before"
    before=$(find "$corpus" -maxdepth 1 -type f | wc -l)

    # The first corpus directory receives the new inputs; the committed corpus is only read.
    cargo +nightly fuzz run --sanitizer "$sanitizer" "$t" "$fresh" "$corpus" -- \
        -max_total_time="$secs" -runs="$runs" -timeout="$timeout" -print_final_stats=1 "${max_len[@]}" \
        >"$logdir/$t.log" 2>&1
    cargo +nightly fuzz run --sanitizer "$sanitizer" "$t" "$corpus" "$fresh" -- \
        -merge=1 -timeout="$timeout" >"$logdir/$t.merge.log" 2>&1

    after=$(find "$corpus" -maxdepth 1 -type f | wc -l)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logdir/$t.log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logdir/$t.log" | tail -n 1)
    ls "$artifacts" | sort | comm -13 "$logdir/$t.artifacts.before" - >"$logdir/$t.found"
    found=$(wc -l <"$logdir/$t.found")
    printf '%-20s %12s %9s %7s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" \
        $((after - before)) "$after" "$found"
    if [ "$found" -gt 0 ]; then
        crashed=1
        sed "s|^|    fuzz/$artifacts/|" "$logdir/$t.found"
        grep -m 5 -E 'panicked|ERROR: libFuzzer|ERROR: AddressSanitizer' "$logdir/$t.log" |
            sed 's/^/    /'
    elif [ -z "$execs" ]; then
        crashed=1
        echo "    $t: no final statistics; last lines of its log:"
        tail -n 5 "$logdir/$t.log" | sed 's/^/    /'
    fi
done
exit "$crashed"
