# Scenarios on AF_XDP: Sluice as a two-port bridge and as the Figure 8 IP router with
# FromXDPDevice/ToXDPDevice instead of FromDevice/ToDevice. Sourced by tests/netns/run.sh
# after lib.sh; each test_* function runs in its own subshell and returns non-zero on failure.
#
# The router scenarios reuse router.sh's topology and tests unchanged: sluice_start is wrapped
# so that every FromDevice/ToDevice of the configuration becomes FromXDPDevice/ToXDPDevice, and
# each test checks that the running configuration really is on AF_XDP and that the XDP program
# is attached to the router's interfaces (so a test can never pass on AF_PACKET by accident).

XDP_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

XDP_BRIDGE_CONF='
  ia :: FromXDPDevice(ra) -> qab :: Queue(1000) -> oa :: ToXDPDevice(rb);
  ib :: FromXDPDevice(rb) -> qba :: Queue(1000) -> ob :: ToXDPDevice(ra);
'

# Both router interfaces carry Sluice's XDP program.
xdp_attached() {
  local i
  for i in "$@"; do
    nsx r ip link show "$i" | grep -q ' xdp' || { fail "no XDP program on $i"; return 1; }
  done
}

test_xdp_bridge_ping() {
  topo_bridge || return 1
  if nsx h1 ping -c 1 -W 1 198.18.0.2 >/dev/null 2>&1; then
    fail "ping works without the bridge: the router namespace leaks"; return
  fi
  sluice_start r "$XDP_BRIDGE_CONF" || return 1
  xdp_attached ra rb || return 1
  nsx h1 ping -c 5 -i 0.2 -W 2 198.18.0.2 || { fail "ping h1 -> h2 over AF_XDP"; return; }
  nsx h2 ping -c 3 -i 0.2 -W 2 198.18.0.1 || { fail "ping h2 -> h1 over AF_XDP"; return; }
  nsx h1 ip neigh show 198.18.0.2 | grep -q "$(mac_of h2 eth0)" || { fail "h1 ARP entry"; return; }
  sluice_alive || { fail "sluice died"; return; }
  # Stopping Sluice detaches the programs: nothing is left on the interfaces.
  sluice_stop
  if nsx r ip link show | grep -q ' xdp'; then fail "XDP program left attached"; return; fi
}

test_xdp_bridge_full_size_and_flood() {
  topo_bridge || return 1
  sluice_start r "$XDP_BRIDGE_CONF" || return 1
  xdp_attached ra rb || return 1
  check_full_size_and_flood 198.18.0.2 3000
}

test_xdp_bridge_tcp_transfer() {
  topo_bridge || return 1
  sluice_start r "$XDP_BRIDGE_CONF" || return 1
  check_tcp_transfer 198.18.0.2
}

# Generic (skb) mode works the same.
test_xdp_bridge_generic_mode() {
  topo_bridge || return 1
  sluice_start r '
    FromXDPDevice(ra, MODE skb) -> Queue(1000) -> ToXDPDevice(rb);
    FromXDPDevice(rb, MODE skb) -> Queue(1000) -> ToXDPDevice(ra);
  ' || return 1
  nsx r ip link show ra | grep -q xdpgeneric || { fail "not in generic mode"; return; }
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.0.2 || fail "ping in generic mode"
}

test_xdp_missing_interface_error() {
  ns_add r || return 1
  local out rc
  out=$(nsx r "$(sluice_bin)" -e 'FromXDPDevice(nosuch0) -> Queue -> ToXDPDevice(nosuch1)' 2>&1)
  rc=$?
  echo "$out"
  [ $rc -ne 0 ] || { fail "sluice exited 0"; return; }
  echo "$out" | grep -q "FromXDPDevice(nosuch0): no such interface 'nosuch0'" || { fail "FromXDPDevice error"; return; }
  echo "$out" | grep -q "ToXDPDevice(nosuch1): no such interface 'nosuch1'" || fail "ToXDPDevice error"
}

# --- The Figure 8 router over AF_XDP, with router.sh's own tests.

xdp_router_setup() {
  [ -f "$XDP_HERE/router.sh" ] || { fail "scenarios/router.sh missing"; return 1; }
  # shellcheck disable=SC1091
  source "$XDP_HERE/router.sh"
  # Every device element of the router's configuration goes to AF_XDP.
  eval "$(declare -f sluice_start | sed '1s/sluice_start/sluice_start_af_packet/')"
  sluice_start() {
    local n="$1" conf="$2"
    shift 2
    conf=$(printf '%s\n' "$conf" | sed -E 's/(^|[^A-Za-z])FromDevice\(/\1FromXDPDevice(/g; s/(^|[^A-Za-z])ToDevice\(/\1ToXDPDevice(/g')
    sluice_start_af_packet "$n" "$conf" "$@" || return 1
    grep -q FromXDPDevice "$NETNS_TMP/router.click" || { fail "configuration not on AF_XDP"; return 1; }
    if grep -qE '(^|[^A-Za-z])(From|To)Device\(' "$NETNS_TMP/router.click"; then
      fail "AF_PACKET elements left in the configuration"; return 1
    fi
    xdp_attached ra rb
  }
}

# Runs router.sh's test $1 over AF_XDP; a missing test is a failure, never a skip.
xdp_router_test() {
  xdp_router_setup || return 1
  declare -F "$1" >/dev/null || { fail "router.sh has no $1"; return 1; }
  "$1"
}

test_xdp_router_ping_and_arp() { xdp_router_test test_router_ping_and_arp; }
test_xdp_router_own_address_via_tap() { xdp_router_test test_router_own_address_via_tap; }
test_xdp_router_traceroute() { xdp_router_test test_router_traceroute; }
test_xdp_router_fragmentation() { xdp_router_test test_router_fragmentation; }
test_xdp_router_tcp_transfer() { xdp_router_test test_router_tcp_transfer; }
