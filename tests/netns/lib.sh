# Network-namespace test harness for Sluice (bash library; `source` it).
#
# Creates namespaces named sluice-<random>-<name> and veth pairs between them, with addresses
# from 198.18.0.0/15 only, runs commands inside, and ALWAYS deletes everything it created on
# exit (EXIT/INT/TERM trap), including background processes. Nothing is created in the root
# namespace: veth pairs are born directly inside their namespaces.
#
# Main functions:
#   ns_add NAME                     create namespace NAME (loopback up, IPv6 off)
#   nsx NAME CMD...                 run CMD inside namespace NAME
#   veth_link NS1 IF1 NS2 IF2       veth pair IF1 (in NS1) <-> IF2 (in NS2), both up
#   addr NS IF ADDR/LEN             add an IPv4 address
#   router_ns NAME                  namespace for Sluice: forwarding off, no addresses
#   host_tune NS IF                 host side: checksum/segmentation offloads off
#   sluice_start NS CONF            run Sluice on configuration CONF in NS (background)
#   sluice_alive                    true while that Sluice runs
#   topo_bridge / topo_router       the standard three-namespace topologies
#   netns_cleanup                   delete everything (called by the trap)
#   fail MSG                        report a test failure (with the Sluice log), return 1
#   check_full_size_and_flood DST N 1500-byte pings and a flood of N pings h1 -> DST, no loss
#   check_tcp_transfer DST          4 MB over TCP h1 -> h2 (at DST, IPv4 or IPv6), same bytes
#                                   received

NETNS_TAG="sluice-${SLUICE_NETNS_RUN:-}$(head -c3 /dev/urandom | od -An -tx1 | tr -d ' \n')"
NETNS_LIST=()
NETNS_PIDS=()
NETNS_TMP="$(mktemp -d /tmp/sluice-netns.XXXXXX)"
SLUICE_PID=""
SLUICE_LOG="$NETNS_TMP/sluice.log"

netns_cleanup() {
  local p n
  for p in "${NETNS_PIDS[@]}"; do
    kill "$p" 2>/dev/null
  done
  for p in "${NETNS_PIDS[@]}"; do
    wait "$p" 2>/dev/null
  done
  NETNS_PIDS=()
  for n in "${NETNS_LIST[@]}"; do
    # Any process still inside (a forgotten nc) is killed before the namespace goes.
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$n" 2>/dev/null
  done
  NETNS_LIST=()
  rm -rf "$NETNS_TMP"
}
trap netns_cleanup EXIT
trap 'netns_cleanup; exit 130' INT
trap 'netns_cleanup; exit 143' TERM

ns_name() { echo "$NETNS_TAG-$1"; }

ns_add() {
  local n
  n="$(ns_name "$1")"
  ip netns add "$n" || return 1
  NETNS_LIST+=("$n")
  ip netns exec "$n" ip link set lo up
  ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
}

nsx() {
  local n="$1"
  shift
  ip netns exec "$(ns_name "$n")" "$@"
}

# Background process inside a namespace; its pid is remembered for cleanup and printed.
nsbg() {
  local n="$1"
  shift
  ip netns exec "$(ns_name "$n")" "$@" &
  NETNS_PIDS+=("$!")
  echo "$!"
}

veth_link() {
  local ns1="$1" if1="$2" ns2="$3" if2="$4"
  ip link add "$if1" netns "$(ns_name "$ns1")" type veth peer name "$if2" netns "$(ns_name "$ns2")" || return 1
  nsx "$ns1" ip link set "$if1" up
  nsx "$ns2" ip link set "$if2" up
}

addr() { nsx "$1" ip addr add "$3" dev "$2"; }

# The router namespace: the kernel must neither forward nor answer.
# The router namespace's kernel sees every frame on the interfaces Sluice owns. It must not
# answer ARP there for addresses it holds elsewhere (a KernelTap's): arp_ignore=1 answers
# only for addresses of the interface a request came in on, so Sluice's path is the only one.
router_ns() {
  ns_add "$1" || return 1
  nsx "$1" sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
    net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.default.arp_ignore=1
}

# Offloads off: frames that cross an AF_PACKET router must carry complete checksums and
# must not be merged beyond the MTU.
host_tune() {
  nsx "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1 || true
}
router_tune() {
  nsx "$1" ethtool -K "$2" tso off gso off gro off lro off >/dev/null 2>&1 || true
}

sluice_bin() {
  if [ -n "${SLUICE:-}" ]; then echo "$SLUICE"; return; fi
  echo "${CARGO_TARGET_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target}/${SLUICE_PROFILE:-release}/sluice"
}

# sluice_start NS CONF [ARGS...]: starts Sluice on CONF (a string) inside NS and waits until
# it has initialised (or failed).
sluice_start() {
  local n="$1" conf="$2"
  shift 2
  printf '%s\n' "$conf" >"$NETNS_TMP/router.click"
  ip netns exec "$(ns_name "$n")" "$(sluice_bin)" -f "$NETNS_TMP/router.click" "$@" >"$SLUICE_LOG" 2>&1 &
  SLUICE_PID=$!
  NETNS_PIDS+=("$SLUICE_PID")
  sleep 0.5
  if ! sluice_alive; then
    echo "sluice failed to start:" >&2
    cat "$SLUICE_LOG" >&2
    return 1
  fi
}

sluice_alive() { [ -n "$SLUICE_PID" ] && kill -0 "$SLUICE_PID" 2>/dev/null; }

sluice_stop() {
  if sluice_alive; then
    kill -INT "$SLUICE_PID" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do sluice_alive || break; sleep 0.1; done
    kill "$SLUICE_PID" 2>/dev/null
    wait "$SLUICE_PID" 2>/dev/null
  fi
  SLUICE_PID=""
}

# h1 -- r -- h2 on one subnet, 198.18.0.0/24: Sluice bridges ra <-> rb.
topo_bridge() {
  ns_add h1 && router_ns r && ns_add h2 || return 1
  veth_link h1 eth0 r ra && veth_link r rb h2 eth0 || return 1
  addr h1 eth0 198.18.0.1/24 && addr h2 eth0 198.18.0.2/24
  host_tune h1 eth0; host_tune h2 eth0; router_tune r ra; router_tune r rb
}

# h1 (198.18.1.2/24) -- ra | Sluice router | rb -- h2 (198.18.2.2/24); the router's addresses
# are 198.18.1.1 and 198.18.2.1 (in its configuration only, not on the interfaces).
R_IF0=ra R_IF1=rb
R_ADDR0=198.18.1.1 R_ADDR1=198.18.2.1
H1_ADDR=198.18.1.2 H2_ADDR=198.18.2.2
topo_router() {
  ns_add h1 && router_ns r && ns_add h2 || return 1
  veth_link h1 eth0 r ra && veth_link r rb h2 eth0 || return 1
  addr h1 eth0 $H1_ADDR/24 && addr h2 eth0 $H2_ADDR/24
  nsx h1 ip route add default via $R_ADDR0
  nsx h2 ip route add default via $R_ADDR1
  host_tune h1 eth0; host_tune h2 eth0; router_tune r ra; router_tune r rb
}

mac_of() { nsx "$1" cat "/sys/class/net/$2/address"; }

# captures_settle FILE...: waits (at most 10 s) until none of these capture files has
# grown for 0.3 s. tcpdump stops at SIGINT without reading what its socket still holds, so
# a capture is stopped only once it has caught up with the traffic.
captures_settle() {
  local before="" now f
  for _ in $(seq 33); do
    now=""
    for f in "$@"; do now="$now $(stat -c %s "$f" 2>/dev/null)"; done
    [ "$now" = "$before" ] && return 0
    before="$now"
    sleep 0.3
  done
}

# Test helpers: each reports a failure with `fail` (which prints the Sluice log) and returns 1.

fail() { echo "FAILED: $*"; [ -f "$SLUICE_LOG" ] && { echo "--- sluice log"; cat "$SLUICE_LOG"; }; return 1; }

# Full-size frames (1472 bytes of ping payload: 1500-byte IP packets) from h1 to DST, then a
# flood of COUNT pings: none may be lost.
check_full_size_and_flood() {
  local dst="$1" count="$2" out
  nsx h1 ping -c 3 -s 1472 -M do -W 2 "$dst" || { fail "1500-byte frames"; return 1; }
  out=$(nsx h1 ping -f -c "$count" -W 1 "$dst" 2>&1)
  echo "$out" | tail -3
  echo "$out" | grep -qE ' 0(\.0+)?% packet loss' || { fail "flood ping lost packets"; return 1; }
}

# 4 MB of random data over TCP (nc) from h1 to h2 listening at DST: the bytes received must
# hash the same as the bytes sent.
check_tcp_transfer() {
  local dst="$1" a b family=""
  [[ "$dst" == *:* ]] && family=-6
  head -c 4000000 /dev/urandom >"$NETNS_TMP/data"
  nsbg h2 sh -c "nc $family -l -N 5001 > $NETNS_TMP/recv" >/dev/null
  sleep 0.3
  nsx h1 timeout 20 nc -N "$dst" 5001 <"$NETNS_TMP/data" || { fail "nc send"; return 1; }
  for _ in $(seq 50); do
    [ "$(stat -c %s "$NETNS_TMP/recv" 2>/dev/null)" = 4000000 ] && break
    sleep 0.1
  done
  a=$(sha256sum <"$NETNS_TMP/data")
  b=$(sha256sum <"$NETNS_TMP/recv")
  echo "sent $a"; echo "recv $b"
  [ "$a" = "$b" ] || { fail "received data differs"; return 1; }
}
