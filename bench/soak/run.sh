#!/usr/bin/env bash
# Soak benchmark: the Figure 8 IP router between network namespaces under a constant load for
# a long time, once per thread count, watching memory, drops and latency.
#
#   bench/soak/run.sh [SECONDS] [RATE]          (defaults: 600 s, 250000 packets/s)
#
# Topology, router and generator are bench/mlffr's, with its tuning: generator namespace h1 ->
# veth -> router namespace r -> veth -> sink namespace h2; the router is
# scripts/make-ip-conf.py's Figure 8 configuration on AF_XDP (MODE=sluice-packet: AF_PACKET),
# POLL busy at nice 19, the receiving veth's threaded NAPI kthread pinned to the router's CPU;
# the generator is Sluice (RatedSource of 64-byte UDP frames -> ToXDPDevice) at a constant
# RATE for SECONDS, pinned to CPU 0. The default RATE is half of the router's MLFFR on this
# topology (500 kpps with one thread, bench/mlffr/README.md). Each thread count in THREADS
# (default "1 2") gets a fresh topology and router (`sluice -j N`), with a ControlSocket on a
# Unix socket. Meanwhile:
#   - sample.py records, every INTERVAL seconds (default 1), the router's resident memory,
#     the generator's and sink's interface counters and the sum of every element's `drops`;
#   - a latency probe pings h2 from h1 through the router 5 times a second (`ping -D`).
# report.py then prints, per run, rates, loss, drops, memory and latency percentiles, plots
# them over time (soak.png), and fails the run if memory grew: the peak resident memory of
# the second half may exceed the first half's (after a warm-up of a tenth of the run, at
# least 2 s) by SLACK_KB at most (default 4096).
#
# Writes samples-jN.csv, ping-jN.log and soak.png into OUT (default bench/soak). Exits 1 if
# a router fails to start or dies, forwards nothing, or its memory is not flat. Needs root;
# every namespace is deleted on every exit path (tests/netns/lib.sh's trap). The generator,
# the router and the sink share this machine's cores: with -j 2 the router's second thread
# shares the generator's core.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
[ "$(id -u)" -eq 0 ] || { echo "bench/soak: needs root"; exit 1; }

SECS="${1:-600}"
RATE="${2:-250000}"
THREADS=(${THREADS:-1 2})
MODE="${MODE:-sluice-xdp}"
INTERVAL="${INTERVAL:-1}"
SLACK_KB="${SLACK_KB:-4096}"
OUT="${OUT:-$HERE}"
RTR_POLL="${RTR_POLL:-busy}"
RTR_NICE="${RTR_NICE:-19}"
XDP_FRAMES="${XDP_FRAMES:-8192}"
mkdir -p "$OUT"

# shellcheck disable=SC1091
source "$ROOT/bench/common.sh"
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
NCPU=$(nproc)
GEN_CPU=0
RTR_CPU=$((NCPU > 1 ? 1 : 0))

# One soak run with N router threads; its samples and probe log land in OUT.
soak() {
  local n="$1" conf fr gen sampler t
  NETNS_TMP="$(mktemp -d /tmp/sluice-soak.XXXXXX)"
  SLUICE_LOG="$NETNS_TMP/sluice.log"
  trap netns_cleanup EXIT
  topo_router || return 1
  bench_tune "$RTR_CPU" || return 1
  conf=$(router_conf "$MODE") || { echo "cannot generate the configuration"; return 1; }
  sluice_start r "$conf" -j "$n" -u "$NETNS_TMP/control" || return 1
  if [ "$n" -eq 1 ]; then
    taskset -apc "$RTR_CPU" "$SLUICE_PID" >/dev/null
  fi
  for t in /proc/"$SLUICE_PID"/task/*; do renice -n "$RTR_NICE" -p "${t##*/}" >/dev/null; done
  nsx h1 ping -c 2 -i 0.2 -W 2 "$H2_ADDR" >/dev/null || { fail "no connectivity"; return 1; }
  fr=$(frame_hex "$(mac_of r ra)" "$(mac_of h1 eth0)")
  if [ "$MODE" = sluice-xdp ]; then gen="ToXDPDevice(eth0)"; else gen="ToDevice(eth0)"; fi
  nsx h1 taskset -c "$GEN_CPU" timeout $((SECS + 30)) "$SLUICE" -e \
    "RatedSource(DATA \"\\<$fr>\", RATE $RATE, LIMIT $((RATE * SECS)), STOP true) -> Queue(4096) -> $gen;" \
    >"$NETNS_TMP/gen.log" 2>&1 &
  NETNS_PIDS+=("$!")
  nsx h1 ping -D -i 0.2 -w "$SECS" "$H2_ADDR" >"$OUT/ping-j$n.log" 2>&1 &
  NETNS_PIDS+=("$!")
  "$PY" "$HERE/sample.py" "$SLUICE_PID" "$NETNS_TMP/control" "$(ns_name h1)" "$(ns_name h2)" \
    "$SECS" "$INTERVAL" "$OUT/samples-j$n.csv"
  sampler=$?
  sluice_alive || { fail "the router died"; return 1; }
  sluice_stop
  [ "$sampler" -eq 0 ] || { fail "sampling failed"; return 1; }
  netns_cleanup
}

echo "soak: ${SECS} s at $RATE pps per run, threads: ${THREADS[*]}, $MODE, POLL $RTR_POLL;" \
  "$NCPU CPUs shared by generator, router and sink ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), kernel $(uname -r))"
runs=()
for n in "${THREADS[@]}"; do
  (soak "$n") || { echo "soak -j $n: FAILED"; exit 1; }
  runs+=("-j $n=$OUT/samples-j$n.csv:$OUT/ping-j$n.log")
done
warmup=$(python3 -c "print(max(2.0, $SECS / 10))")
"$PY" "$HERE/report.py" "$OUT/soak.png" "$warmup" "$SLACK_KB" "${runs[@]}"
