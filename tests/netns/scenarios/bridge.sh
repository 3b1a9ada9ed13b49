# Scenarios with Sluice as a two-port bridge (FromDevice -> Queue -> ToDevice both ways) and
# the KernelTap host path. Sourced by tests/netns/run.sh after lib.sh; each test_* function
# runs in its own subshell and returns non-zero on failure.

BRIDGE_CONF='
  FromDevice(ra, PROMISC true) -> qab :: Queue(1000) -> ToDevice(rb);
  FromDevice(rb, PROMISC true) -> qba :: Queue(1000) -> ToDevice(ra);
'

# Without Sluice the hosts cannot reach each other; with the bridge they can.
test_bridge_ping() {
  topo_bridge || return 1
  if nsx h1 ping -c 1 -W 1 198.18.0.2 >/dev/null 2>&1; then
    fail "ping works without the bridge: the router namespace leaks"; return
  fi
  sluice_start r "$BRIDGE_CONF" || return 1
  nsx h1 ping -c 5 -i 0.2 -W 2 198.18.0.2 || { fail "ping h1 -> h2 through the bridge"; return; }
  nsx h2 ping -c 3 -i 0.2 -W 2 198.18.0.1 || { fail "ping h2 -> h1 through the bridge"; return; }
  # ARP learned both ways, through Sluice.
  nsx h1 ip neigh show 198.18.0.2 | grep -q "$(mac_of h2 eth0)" || { fail "h1 ARP entry"; return; }
  nsx h2 ip neigh show 198.18.0.1 | grep -q "$(mac_of h1 eth0)" || { fail "h2 ARP entry"; return; }
  sluice_alive || fail "sluice died"
}

# Large pings (1472 bytes of payload: full 1500-byte frames) and a burst (flood) all arrive.
test_bridge_full_size_and_flood() {
  topo_bridge || return 1
  sluice_start r "$BRIDGE_CONF" || return 1
  check_full_size_and_flood 198.18.0.2 2000
}

# A TCP transfer through the bridge; the received data's checksum matches.
test_bridge_tcp_transfer() {
  topo_bridge || return 1
  sluice_start r "$BRIDGE_CONF" || return 1
  check_tcp_transfer 198.18.0.2
}

# The interface under FromDevice goes down and comes back: Sluice survives and forwards again.
test_bridge_survives_link_down() {
  topo_bridge || return 1
  sluice_start r "$BRIDGE_CONF" || return 1
  nsx h1 ping -c 2 -i 0.2 -W 2 198.18.0.2 >/dev/null || { fail "ping before"; return; }
  nsx r ip link set rb down
  nsx h1 ping -c 2 -i 0.2 -W 1 198.18.0.2 >/dev/null 2>&1 && { fail "ping while rb is down"; return; }
  sluice_alive || { fail "sluice died when rb went down"; return; }
  nsx r ip link set rb up
  sleep 0.5
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.0.2 || { fail "ping after rb came back"; return; }
  sluice_alive || fail "sluice died"
}

# Misconfiguration: a missing interface is a clear initialisation error naming the element.
test_missing_interface_error() {
  ns_add r || return 1
  local out
  out=$(nsx r "$(sluice_bin)" -e 'FromDevice(nosuch0) -> Queue -> ToDevice(nosuch1)' 2>&1)
  local rc=$?
  echo "$out"
  [ $rc -ne 0 ] || { fail "sluice exited 0"; return; }
  echo "$out" | grep -q "FromDevice(nosuch0): no such interface 'nosuch0'" || { fail "FromDevice error"; return; }
  echo "$out" | grep -q "ToDevice(nosuch1): no such interface 'nosuch1'" || fail "ToDevice error"
}

# Host path: the router namespace's kernel owns 198.18.0.254 on a KernelTap that Sluice bridges
# to ra, so h1 reaches the router's own stack only through Sluice.
test_tap_host_path() {
  topo_bridge || return 1
  sluice_start r '
    tap :: KernelTap(198.18.0.254/24, ETHER 02:00:00:00:00:fe, DEVNAME stap0);
    FromDevice(ra) -> Queue(1000) -> tap -> Queue(1000) -> ToDevice(ra);
  ' || return 1
  nsx r ip -br addr show stap0 | grep -q 198.18.0.254/24 || { fail "tap address"; return; }
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.0.254 || { fail "ping the router's stack through the tap"; return; }
  nsx h1 ip neigh show 198.18.0.254 | grep -q 02:00:00:00:00:fe || { fail "ARP for the tap address"; return; }
  # Host-originated traffic enters the graph: the router's stack pings h1.
  nsx r ping -c 2 -i 0.2 -W 2 198.18.0.1 || fail "ping h1 from the router's stack"
}
