# Sluice forwarding by routes BIRD learns over BGP, as a Linux router would.
#
# h1 -- ra | Sluice in r | rb -- h2          (the topology of kernel_routes.sh, plus:)
#            r: mg (198.18.9.1/30) ---- pm (198.18.9.2/30): peer p
#
# BIRD in p announces 198.18.200.0/24 over eBGP (AS 65002 to AS 65001) with next hop h2
# (198.18.2.2, which owns 198.18.200.1); BIRD in r learns it over the management link mg, which
# Sluice does not use, and exports it to kernel table $KR_KTABLE of r, which Sluice follows.
# Sluice must forward h1's traffic to 198.18.200.1 within 1 s of the announcement and drop it
# (no route, counted) within 1 s of the withdrawal; both delays are printed. The router
# namespace's kernel owns 198.18.2.1/24 on rb (BIRD takes a next hop only on a connected
# network) but forwards nothing. BIRD runs in the foreground; its processes are stopped by PID.

BGP_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=kernel_routes.sh
source "$BGP_HERE/kernel_routes.sh"

BGP_PIDS=()

bgp_stop() {
  local p
  for p in "${BGP_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${BGP_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  BGP_PIDS=()
}

# bird_start NS NAME CONFIG: BIRD on CONFIG (a string) in NS, control socket $NETNS_TMP/NAME.ctl.
bird_start() {
  local ns="$1" name="$2"
  printf '%s\n' "$3" >"$NETNS_TMP/$name.conf"
  nsbg "$ns" bird -f -c "$NETNS_TMP/$name.conf" -s "$NETNS_TMP/$name.ctl" \
    -P "$NETNS_TMP/$name.pid" >/dev/null 2>>"$NETNS_TMP/$name.log"
  BGP_PIDS+=("${NETNS_PIDS[-1]}")
}

# birdc_cmd NAME ARGS...: the command line of birdc ARGS... for BIRD NAME.
birdc_cmd() { echo timeout 10 birdc -s "$NETNS_TMP/$1.ctl" "${@:2}"; }
birdc_of() { $(birdc_cmd "$@"); }

# BIRD of the router: BGP from the peer into master4, exported to kernel table $KR_KTABLE.
bgp_router_conf() {
  cat <<EOF
router id 198.18.9.1;
protocol device { scan time 1; }
protocol kernel {
  kernel table $KR_KTABLE;
  ipv4 { import none; export where proto = "peer"; };
}
protocol bgp peer {
  local 198.18.9.1 as 65001;
  neighbor 198.18.9.2 as 65002;
  connect delay time 1;
  connect retry time 2;
  error wait time 1, 5;
  ipv4 { import all; export none; };
}
EOF
}

# BIRD of the peer: one static prefix, announced with next hop h2.
bgp_peer_conf() {
  cat <<EOF
router id 198.18.9.2;
protocol device { scan time 1; }
protocol static announce {
  ipv4;
  route 198.18.200.0/24 blackhole;
}
protocol bgp upstream {
  local 198.18.9.2 as 65002;
  neighbor 198.18.9.1 as 65001;
  connect delay time 1;
  connect retry time 2;
  error wait time 1, 5;
  ipv4 { import none; export where proto = "announce"; next hop address 198.18.2.2; };
}
EOF
}

test_bgp_bird_to_sluice() {
  command -v bird >/dev/null || "$BGP_HERE/../../../scripts/setup.sh" >/dev/null ||
    { fail "scripts/setup.sh (installs bird2) failed"; return 1; }
  command -v bird >/dev/null && command -v birdc >/dev/null || { fail "bird is missing"; return 1; }
  trap 'bgp_stop; netns_cleanup' EXIT
  kr_topology || return 1
  ns_add p || return 1
  veth_link r mg p pm || return 1
  addr r mg 198.18.9.1/30 && addr p pm 198.18.9.2/30 && addr r rb 198.18.2.1/24 || return 1
  nsx h2 ip addr add 198.18.200.1/32 dev lo
  kr_start || return 1
  bird_start r rbird "$(bgp_router_conf)"
  bird_start p pbird "$(bgp_peer_conf)"
  local up="" drops
  for _ in $(seq 150); do
    birdc_of rbird show protocols peer 2>/dev/null | grep -q Established && { up=1; break; }
    sleep 0.2
  done
  [ -n "$up" ] || { birdc_of rbird show protocols all peer; cat "$NETNS_TMP"/*bird.log; fail "BGP session not established"; return 1; }
  kr_wait_for "rt.lookup 198.18.200.1" "1 198.18.2.2" 5000 >/dev/null || { fail "announced route not in Sluice"; return 1; }
  nsx r ip route show table $KR_KTABLE
  ping_ok h1 198.18.200.1 || { fail "h1 -> 198.18.200.1 over the BGP route"; return 1; }

  # Withdrawal: the peer stops announcing.
  drops=$(kr_read rt.drops)
  kr_change "rt.lookup 198.18.200.1" "-1" "BGP withdrawal" \
    $(birdc_cmd pbird disable announce) || return 1
  ping_ok h1 198.18.200.1 && { fail "198.18.200.1 answered after the withdrawal"; return 1; }
  [ "$(kr_read rt.drops)" -gt "$drops" ] || { fail "no-route drops not counted"; return 1; }

  # Announcement: the peer announces again.
  kr_change "rt.lookup 198.18.200.1" "1 198.18.2.2" "BGP announcement" \
    $(birdc_cmd pbird enable announce) || return 1
  ping_ok h1 198.18.200.1 || { fail "h1 -> 198.18.200.1 after the announcement"; return 1; }
  [ "$(kr_read kr.errors)" = 0 ] || { fail "table errors"; return 1; }
  sluice_alive || fail "sluice died"
}
