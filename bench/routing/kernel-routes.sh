#!/usr/bin/env bash
# KernelRoutes with a full table: N IPv4 prefixes (default 500,000 of the shared table)
# installed with `ip -batch` into kernel table 100 of a private network namespace, and a
# Sluice DirectIPLookup following that table from outside the namespace (NETNS).
#
#   sudo bench/routing/kernel-routes.sh [PREFIXES.gz]     # N=... for another count
#
# Prints, for each case, the time the kernel took and the time until Sluice's table held
# every route (polled through the ControlSocket every 5 ms):
#   follow   Sluice runs, the kernel table is empty; `ip -batch` installs the N routes.
#   dump     the N routes are in the kernel table before Sluice starts (its first dump).
#   flush    `ip route flush table 100` while Sluice follows: until Sluice holds none.
# No packet is sent. The namespace and Sluice are removed on exit. SLUICE=path skips the build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
[ "$(id -u)" -eq 0 ] || { echo "must run as root (network namespaces)" >&2; exit 1; }
DATA="${1:-../shared/data/ipv4-prefixes.txt.gz}"
N="${N:-500000}"
KTABLE=100
if [ -z "${SLUICE:-}" ]; then
  cargo build --release -q -p sluice-cli
  SLUICE="${CARGO_TARGET_DIR:-$ROOT/target}/release/sluice"
fi

NS="sluice-bench-kr-$$"
TMP="$(mktemp -d /tmp/sluice-kr-bench.XXXXXX)"
CTL="$TMP/control"
SLUICE_PID=""
cleanup() {
  [ -n "$SLUICE_PID" ] && kill "$SLUICE_PID" 2>/dev/null && wait "$SLUICE_PID" 2>/dev/null
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# The ControlSocket client: `read HANDLER` prints a handler's value; `wait COUNT T0FILE READY`
# creates file READY, waits for T0FILE (the start, nanoseconds since the epoch as `date
# +%s%N`), then reads kr.routes and kr.pending over one connection every 5 ms (connecting as
# soon as the socket exists) until Sluice holds COUNT routes with nothing pending, and prints
# the milliseconds since the start.
PY='
import os, socket, sys, time
def connect(path):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(path)
            break
        except OSError:
            s.close()
            time.sleep(0.005)
    f = s.makefile("rb")
    f.readline()
    return s, f
def read(s, f, h):
    s.sendall(f"READ {h}\r\n".encode())
    line = f.readline().decode()
    if not line.startswith("200"):
        sys.exit(f"READ {h}: {line.strip()}")
    n = int(f.readline().split()[1])
    return f.read(n).decode().strip()
if sys.argv[2] == "read":
    s, f = connect(sys.argv[1])
    print(read(s, f, sys.argv[3]))
    sys.exit(0)
want, t0file = sys.argv[3], sys.argv[4]
open(sys.argv[5], "w").close()
while not os.path.exists(t0file):
    time.sleep(0.002)
t0 = int(open(t0file).read())
s, f = connect(sys.argv[1])
deadline = time.monotonic() + 300
while True:
    got = read(s, f, "kr.routes")
    if got == want and read(s, f, "kr.pending") == "0":
        break
    if time.monotonic() > deadline:
        sys.exit(f"Sluice holds {got} routes, not {want}")
    time.sleep(0.005)
print((time.time_ns() - t0) // 1000000)
'
read_handler() { python3 -c "$PY" "$CTL" read "$1"; }

# start_waiter COUNT: a waiter for COUNT routes in Sluice, ready before the clock starts.
start_waiter() {
  rm -f "$TMP/t0" "$TMP/ready"
  python3 -c "$PY" "$CTL" wait "$1" "$TMP/t0" "$TMP/ready" >"$TMP/waited" &
  WAITER=$!
  until [ -e "$TMP/ready" ]; do sleep 0.01; done
}
# start_clock: the start of the timed interval (also in $T0).
start_clock() {
  T0=$(date +%s%N)
  echo "$T0" >"$TMP/t0.new"
  mv "$TMP/t0.new" "$TMP/t0"
}
# waited: waits for the waiter; its milliseconds in $WAITED.
waited() {
  wait "$WAITER"
  WAITED=$(cat "$TMP/waited")
}

start_sluice() {
  rm -f "$CTL"
  "$SLUICE" -u "$CTL" -e "Idle -> rt :: DirectIPLookup;
    rt[0] -> Discard; rt[1] -> Discard; rt[2] -> Discard; rt[3] -> Discard;
    kr :: KernelRoutes(rt, KTABLE $KTABLE, NETNS $NS, DEV k0 0, DEV k1 1, DEV k2 2, DEV k3 3);" \
    >"$TMP/sluice.log" 2>&1 &
  SLUICE_PID=$!
  for _ in $(seq 100); do [ -S "$CTL" ] && return 0; sleep 0.05; done
  cat "$TMP/sluice.log" >&2
  exit 1
}

stop_sluice() {
  kill "$SLUICE_PID"
  wait "$SLUICE_PID" 2>/dev/null || true
  SLUICE_PID=""
}

# The namespace: four links for the routes' interfaces (veth pairs, which every kernel has).
ip netns add "$NS"
ip -n "$NS" link set lo up
for i in 0 1 2 3; do
  ip -n "$NS" link add "k$i" type veth peer name "k${i}p"
  ip -n "$NS" link set "k$i" up
  ip -n "$NS" link set "k${i}p" up
done

# The routes: the first N distinct prefixes, each through k(PORT mod 4).
zcat "$DATA" | awk -v n="$N" -v t="$KTABLE" '
  /^#/ || NF < 2 || seen[$1]++ || c >= n { next }
  { print "route add " $1 " dev k" ($2 % 4) " table " t; c++ }' >"$TMP/batch"
COUNT=$(wc -l <"$TMP/batch")
echo "$COUNT prefixes from $DATA, kernel $(uname -r), $(nproc) CPUs"

echo "== follow: Sluice runs, ip -batch installs the routes"
start_sluice
start_waiter 0
start_clock
waited
start_waiter "$COUNT"
start_clock
ip -n "$NS" -batch "$TMP/batch"
kernel=$(ms_since "$T0")
waited
echo "kernel install: $kernel ms; Sluice holds all $COUNT routes after $WAITED ms" \
  "(overruns $(read_handler kr.overruns), dumps $(read_handler kr.dumps), errors $(read_handler kr.errors)," \
  "longest turn $(read_handler kr.longest_turn) us)"
stop_sluice

echo "== dump: the routes are in the kernel before Sluice starts"
rm -f "$CTL"
start_waiter "$COUNT"
start_clock
start_sluice
waited
echo "Sluice holds all $COUNT routes $WAITED ms after its start (errors $(read_handler kr.errors)," \
  "longest turn $(read_handler kr.longest_turn) us)"

echo "== flush: ip route flush table $KTABLE"
start_waiter 0
start_clock
ip -n "$NS" route flush table "$KTABLE"
kernel=$(ms_since "$T0")
waited
echo "kernel flush: $kernel ms; Sluice holds no route after $WAITED ms" \
  "(overruns $(read_handler kr.overruns), dumps $(read_handler kr.dumps)," \
  "longest turn $(read_handler kr.longest_turn) us)"
stop_sluice
