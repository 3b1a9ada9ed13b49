# Scenarios with Sluice as the IP router of Figure 8 (two interfaces) between two Linux hosts,
# on FromDevice/ToDevice, with a KernelTap host path for packets addressed to the router.
#
# The router's own stack lives in a fourth namespace "rs": Sluice's KernelTap is moved there,
# so the router namespace's kernel owns no address at all and every answer from "the router"
# (ping of 198.18.1.1, ARP, ICMP errors) provably comes through Sluice.
#
# The configuration is the Figure 8 router written out for two interfaces (the same structure
# as Click's make-ip-conf.pl); interface 1 (rb, towards h2) has MTU $LOW_MTU.

LOW_MTU=1000

fail() { echo "FAILED: $*"; [ -f "$SLUICE_LOG" ] && { echo "--- sluice log"; cat "$SLUICE_LOG"; }; return 1; }

fig8_conf() {
  local m0="$1" m1="$2" mtu0="$3" mtu1="$4"
  cat <<EOF
// Figure 8 IP router, 2 interfaces: 0 = ra $R_ADDR0/24 $m0, 1 = rb $R_ADDR1/24 $m1.
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
fd0 :: FromDevice($R_IF0) -> c0;
fd1 :: FromDevice($R_IF1) -> c1;
out0 :: Queue(1000) -> td0 :: ToDevice($R_IF0);
out1 :: Queue(1000) -> td1 :: ToDevice($R_IF1);
arpq0 :: ARPQuerier($R_ADDR0, $m0) -> out0;
arpq1 :: ARPQuerier($R_ADDR1, $m1) -> out1;
c0[0] -> ARPResponder($R_ADDR0 $m0) -> out0;
c1[0] -> ARPResponder($R_ADDR1 $m1) -> out1;
c0[1] -> [1]arpq0;
c1[1] -> [1]arpq1;
c0[3] -> Discard;
c1[3] -> Discard;

// Host path: packets for the router go to the kernel through a tap; the kernel's packets
// come back into the route lookup. The tap's peer answers ARP for everything (proxy).
tap :: KernelTap($R_ADDR0/24, ETHER 02:00:00:00:00:fe, DEVNAME stap0);
tc :: Classifier(12/0806 20/0001, 12/0800, -);
tap -> tc;
tc[0] -> ARPResponder(0.0.0.0/0 02:00:00:00:00:fd) -> tap;
tc[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
tc[2] -> Discard;

rt :: StaticIPLookup($R_ADDR0/32 0, $R_ADDR1/32 0,
                     198.18.1.255/32 0, 198.18.2.255/32 0, 198.18.1.0/32 0, 198.18.2.0/32 0,
                     198.18.1.0/24 1, 198.18.2.0/24 2, 255.255.255.255/32 0);
ip :: Strip(14) -> CheckIPHeader(INTERFACES $R_ADDR0/24 $R_ADDR1/24) -> GetIPAddress(16) -> rt;
c0[2] -> Paint(1) -> ip;
c1[2] -> Paint(2) -> ip;

rt[0] -> EtherEncap(0x0800, 02:00:00:00:00:fd, 02:00:00:00:00:fe) -> tap;

rt[1] -> DropBroadcasts -> cp0 :: PaintTee(1) -> gio0 :: IPGWOptions($R_ADDR0)
      -> FixIPSrc($R_ADDR0) -> dt0 :: DecIPTTL -> fr0 :: IPFragmenter($mtu0) -> [0]arpq0;
cp0[1] -> ICMPError($R_ADDR0, redirect, host) -> rt;
gio0[1] -> ICMPError($R_ADDR0, parameterproblem) -> rt;
dt0[1] -> ICMPError($R_ADDR0, timeexceeded) -> rt;
fr0[1] -> ICMPError($R_ADDR0, unreachable, needfrag) -> rt;

rt[2] -> DropBroadcasts -> cp1 :: PaintTee(2) -> gio1 :: IPGWOptions($R_ADDR1)
      -> FixIPSrc($R_ADDR1) -> dt1 :: DecIPTTL -> fr1 :: IPFragmenter($mtu1) -> [0]arpq1;
cp1[1] -> ICMPError($R_ADDR1, redirect, host) -> rt;
gio1[1] -> ICMPError($R_ADDR1, parameterproblem) -> rt;
dt1[1] -> ICMPError($R_ADDR1, timeexceeded) -> rt;
fr1[1] -> ICMPError($R_ADDR1, unreachable, needfrag) -> rt;
EOF
}

# Topology + router running. Interface 1 (rb and h2's eth0) gets the small MTU.
start_router() {
  topo_router || return 1
  nsx r ip link set rb mtu $LOW_MTU
  nsx h2 ip link set eth0 mtu $LOW_MTU
  local conf
  conf=$(fig8_conf "$(mac_of r ra)" "$(mac_of r rb)" 1500 $LOW_MTU)
  sluice_start r "$conf" || return 1
  # The router's own stack: move the tap to namespace rs, give it the router's addresses.
  ns_add rs || return 1
  nsx r ip link set stap0 netns "$(ns_name rs)" || { fail "move tap"; return 1; }
  nsx rs ip addr add $R_ADDR0/24 dev stap0
  nsx rs ip addr add $R_ADDR1/24 dev stap0
  nsx rs ip link set stap0 up
  # The router namespace's kernel must own no IPv4 address.
  if nsx r ip -4 -o addr show | grep -v ' lo ' | grep -q inet; then
    fail "router namespace has addresses"; return 1
  fi
}

test_router_ping_and_arp() {
  start_router || return 1
  nsx h1 ping -c 3 -i 0.2 -W 2 $H2_ADDR || { fail "ping h1 -> h2"; return; }
  nsx h2 ping -c 3 -i 0.2 -W 2 $H1_ADDR || { fail "ping h2 -> h1"; return; }
  # Hosts resolved the router's addresses to its interfaces' MACs (ARPResponder) ...
  nsx h1 ip neigh show $R_ADDR0 | grep -q "$(mac_of r ra)" || { fail "h1 ARP for router"; return; }
  nsx h2 ip neigh show $R_ADDR1 | grep -q "$(mac_of r rb)" || { fail "h2 ARP for router"; return; }
  # ... and the router resolved the hosts itself (ARPQuerier): its requests created the
  # hosts' entries for it even though the hosts never had to ask first.
  sluice_alive || fail "sluice died"
}

# The router's own address answers through the tap path (the kernel in rs replies).
test_router_own_address_via_tap() {
  start_router || return 1
  nsx h1 ping -c 3 -i 0.2 -W 2 $R_ADDR0 || { fail "ping router address from h1"; return; }
  nsx h2 ping -c 3 -i 0.2 -W 2 $R_ADDR0 || { fail "ping router's other address from h2"; return; }
}

# TTL expiry: traceroute sees the router as hop 1 and h2 as hop 2.
test_router_traceroute() {
  start_router || return 1
  local out
  out=$(nsx h1 traceroute -n -q 1 -w 2 -m 4 $H2_ADDR 2>&1)
  echo "$out"
  echo "$out" | grep -qE "^ *1 +$R_ADDR0 " || { fail "hop 1 is not the router"; return; }
  echo "$out" | grep -qE "^ *2 +$H2_ADDR " || fail "hop 2 is not h2"
}

# A 3000-byte ping crosses the MTU-$LOW_MTU link: the router fragments, h2 reassembles.
test_router_fragmentation() {
  start_router || return 1
  nsx h1 ping -c 3 -i 0.3 -W 2 -s 3000 $H2_ADDR || { fail "ping -s 3000"; return; }
  nsx h2 ping -c 3 -i 0.3 -W 2 -s 3000 $H1_ADDR || fail "ping -s 3000 back"
}

# DF set and too big for the $LOW_MTU link: the router answers Fragmentation Needed with the
# next-hop MTU, and Linux records the path MTU. (h1's own MTU is 1500, so the probe is 1400
# bytes: a larger DF ping never leaves h1.)
test_router_frag_needed_pmtu() {
  start_router || return 1
  nsx h1 ip route flush cache
  local out
  out=$(nsx h1 ping -c 2 -i 0.3 -W 2 -M do -s 1400 $H2_ADDR 2>&1)
  echo "$out"
  echo "$out" | grep -qiE "frag needed|message too long|mtu = $LOW_MTU" || { fail "no Frag Needed"; return; }
  out=$(nsx h1 ip route get $H2_ADDR)
  echo "$out"
  echo "$out" | grep -q "mtu $LOW_MTU" || { fail "path MTU not learned"; return; }
  # With the learned MTU, a large ping now works (h1 fragments to $LOW_MTU).
  nsx h1 ping -c 2 -i 0.3 -W 2 -s 1400 $H2_ADDR || fail "ping after PMTU"
}

# A TCP transfer through the router; the received data's checksum matches.
test_router_tcp_transfer() {
  start_router || return 1
  head -c 3000000 /dev/urandom >"$NETNS_TMP/data"
  nsbg h2 sh -c "nc -l -N 5001 > $NETNS_TMP/recv" >/dev/null
  sleep 0.3
  nsx h1 timeout 30 nc -N $H2_ADDR 5001 <"$NETNS_TMP/data" || { fail "nc send"; return; }
  for _ in $(seq 50); do
    [ "$(stat -c %s "$NETNS_TMP/recv" 2>/dev/null)" = 3000000 ] && break
    sleep 0.1
  done
  local a b
  a=$(sha256sum <"$NETNS_TMP/data")
  b=$(sha256sum <"$NETNS_TMP/recv")
  echo "sent $a"; echo "recv $b"
  [ "$a" = "$b" ] || fail "received data differs"
}
