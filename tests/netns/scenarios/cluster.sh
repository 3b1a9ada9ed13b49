# Scenarios of the cluster router (RouteBricks RB4, SPEC C6): conf/cluster/rb4.toml's four
# nodes, each a Sluice process in its own namespace, joined in a full mesh of veth links,
# each with one external port to a Linux host. `sluice cluster up` makes all of it;
# namespaces and processes are also removed by the harness if a test fails half-way.
#
# Handlers are read through each node's ControlSocket (a Unix socket in the state
# directory, `-u` passed through `cluster up`).

CL_DESC=conf/cluster/rb4.toml

# cluster_up [DESC [SLUICE ARGS...]]: the cluster and its hosts, running.
cluster_up() {
  CL_DESC_USED="${1:-$CL_DESC}"
  [ $# -gt 0 ] && shift
  CL_PREFIX="$NETNS_TAG-cl"
  CL_STATE="$NETNS_TMP/cluster"
  SLUICE_LOG="$NETNS_TMP/cluster-logs"
  if ! "$(sluice_bin)" cluster up "$CL_DESC_USED" --prefix "$CL_PREFIX" --state "$CL_STATE" \
      -- -u "$CL_STATE/{node}.sock" "$@" >"$NETNS_TMP/up.log" 2>&1; then
    cat "$NETNS_TMP/up.log"
    echo "FAILED: cluster up"
    return 1
  fi
  # The harness deletes these (killing what runs inside) even if the test stops early.
  local n
  for n in $(ip netns list | awk '{print $1}' | grep "^$CL_PREFIX-"); do NETNS_LIST+=("$n"); done
}

cluster_down() {
  cat "$CL_STATE"/*.log >"$SLUICE_LOG" 2>/dev/null
  "$(sluice_bin)" cluster down "$CL_DESC_USED" --prefix "$CL_PREFIX" --state "$CL_STATE" ||
    { echo "FAILED: cluster down"; return 1; }
  if ip netns list | grep -q "^$CL_PREFIX-"; then echo "FAILED: namespaces left after down"; return 1; fi
}

# A failure, with every node's log.
cl_fail() {
  echo "FAILED: $*"
  local f
  for f in "$CL_STATE"/*.log; do echo "--- $f"; tail -20 "$f"; done
  return 1
}

# clx NODE[-hP] CMD...: runs CMD in a node's or a host's namespace (n1, n1-h0).
clx() {
  local n="$1"
  [ $# -gt 0 ] && shift
  ip netns exec "$CL_PREFIX-$n" "$@"
}

# cl_read NODE HANDLER: a handler's value on a node.
cl_read() { timeout 10 python3 tests/netns/nat_tools.py read "$CL_STATE/$1.sock" "$2"; }

# cl_field NODE HANDLER INDEX: the INDEX-th (0-based) number of a per-node handler.
cl_field() { cl_read "$1" "$2" | awk -v i="$3" '{print $(i + 1)}'; }

host_addr() { echo "198.18.$1.2"; }

# Every host reaches every other host and the router's addresses; traceroute sees one
# router; 4 MB cross the cluster over TCP intact; each packet's IP header is checked once,
# by its input node (transit nodes forward by Ethernet address alone).
test_cluster_rb4_hosts() {
  cluster_up || return 1
  local i j
  for i in 1 2 3 4; do
    for j in 1 2 3 4; do
      [ "$i" = "$j" ] && continue
      clx "n$i-h0" ping -c 2 -i 0.2 -W 2 "$(host_addr "$j")" >/dev/null ||
        { cl_fail "ping h$i -> h$j"; return 1; }
    done
  done
  clx n1-h0 ping -c 2 -i 0.2 -W 2 198.18.4.1 >/dev/null || { cl_fail "ping of the router's address"; return 1; }
  local tr
  tr=$(clx n1-h0 traceroute -n -q 1 -w 2 -m 5 "$(host_addr 4)")
  echo "$tr"
  # One router between the hosts: the first hop is the cluster, answering from the port
  # the probe came in by (FixIPSrc on the way back, as in Click's Figure 8 router), the
  # second the host.
  echo "$tr" | grep -qE '^ 1  198\.18\.1\.1 ' || { cl_fail "traceroute: first hop"; return 1; }
  echo "$tr" | grep -qE '^ 2  198\.18\.4\.2 ' || { cl_fail "traceroute: second hop"; return 1; }

  # TCP through the cluster: h1 -> h3.
  head -c 4000000 /dev/urandom >"$NETNS_TMP/data"
  clx n3-h0 sh -c "timeout 30 nc -l -N 5001 > $NETNS_TMP/recv" &
  NETNS_PIDS+=("$!")
  sleep 0.3
  clx n1-h0 timeout 20 nc -N "$(host_addr 3)" 5001 <"$NETNS_TMP/data" || { cl_fail "nc send"; return 1; }
  for _ in $(seq 50); do
    [ "$(stat -c %s "$NETNS_TMP/recv" 2>/dev/null)" = 4000000 ] && break
    sleep 0.1
  done
  [ "$(sha256sum <"$NETNS_TMP/data")" = "$(sha256sum <"$NETNS_TMP/recv")" ] ||
    { cl_fail "TCP data differs"; return 1; }

  # Headers processed once: every IP packet the hosts sent was checked by exactly one
  # node (its input node), and transit packets were not checked again.
  local sent=0 checked=0 n tx
  for n in 1 2 3 4; do
    tx=$(clx "n$n-h0" cat /sys/class/net/eth0/statistics/tx_packets)
    sent=$((sent + tx))
    checked=$((checked + $(cl_read "n$n" chk.count)))
  done
  echo "hosts sent $sent frames, nodes checked $checked IP headers"
  # The hosts' frames are their IP packets plus a few ARP requests.
  [ "$checked" -le "$sent" ] && [ "$checked" -ge $((sent - 40)) ] ||
    { cl_fail "IP headers checked $checked times for $sent frames sent"; return 1; }
  cluster_down
}

# cl_udp_run TAG: UDP from h1 to h4, 8 flows of 7.5 Mbit/s (60 Mbit/s in all, more than the
# 25 Mbit/s direct share) for 4 s, sent in bursts (iperf3's 10 ms pacing timer), captured
# as it leaves h1 ($NETNS_TMP/TAG-in.pcap) and as it reaches h4 (TAG-out.pcap).
cl_udp_run() {
  local tag="$1" cap_in cap_out srv
  srv=$(nsbg_cl n4-h0 iperf3 -s -1 -p 5201)
  cap_in=$(nsbg_cl n1-h0 tcpdump -q -i eth0 -s 128 -U --immediate-mode -w "$NETNS_TMP/$tag-in.pcap" udp and dst host 198.18.4.2)
  cap_out=$(nsbg_cl n4-h0 tcpdump -q -i eth0 -s 128 -U --immediate-mode -w "$NETNS_TMP/$tag-out.pcap" udp and dst host 198.18.4.2)
  sleep 1
  clx n1-h0 iperf3 -c 198.18.4.2 -p 5201 -u -b 7.5M -l 1400 -P 8 -t 4 --pacing-timer 10000 \
    >"$NETNS_TMP/$tag-iperf.txt" 2>&1 || { cat "$NETNS_TMP/$tag-iperf.txt"; cl_fail "iperf3"; return 1; }
  captures_settle "$NETNS_TMP/$tag-in.pcap" "$NETNS_TMP/$tag-out.pcap"
  kill -INT "$cap_in" "$cap_out" 2>/dev/null
  wait "$cap_in" "$cap_out" "$srv" 2>/dev/null
  "$(sluice_bin)" cluster reorder "$NETNS_TMP/$tag-in.pcap" "$NETNS_TMP/$tag-out.pcap" --json \
    >"$NETNS_TMP/$tag-reorder.json" || { cl_fail "reorder tool"; return 1; }
}

# Background process in a cluster namespace; its pid is remembered for cleanup and printed.
nsbg_cl() {
  local n="$1"
  shift
  ip netns exec "$CL_PREFIX-$n" "$@" >/dev/null 2>&1 &
  NETNS_PIDS+=("$!")
  echo "$!"
}

# Field KEY of a JSON file.
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# Bytes n1 sent on each internal link (to n2, n3, n4) and what n2 and n3 forwarded to n4.
cl_link_loads() {
  echo "$(cl_field n1 vlb.link_bytes 1) $(cl_field n1 vlb.link_bytes 2) $(cl_field n1 vlb.link_bytes 3)" \
    "$(cl_field n2 vlb.forwarded 3) $(cl_field n3 vlb.forwarded 3) $(cl_read n2 chk.count) $(cl_read n3 chk.count)"
}

# Direct VLB spreads what exceeds the direct share over the intermediates, each link within
# 10% of the VLB ideal (per-packet balancing); transit nodes check no IP header; per-packet
# balancing reorders this bursty traffic (about 11% of same-flow pairs here).
test_cluster_vlb_load_balance() {
  sed 's/^flowlet = .*/flowlet = "off"/' "$CL_DESC" >"$NETNS_TMP/rb4-noflowlet.toml"
  cluster_up "$NETNS_TMP/rb4-noflowlet.toml" || return 1
  cl_udp_run perpacket || return 1
  local loads
  loads=$(cl_link_loads)
  echo "n1 -> n2 n3 n4 bytes, n2 n3 forwarded to n4 (packets), n2 n3 headers checked: $loads"
  python3 - "$loads" "$NETNS_TMP/perpacket-reorder.json" <<'PY' || { cl_fail "link loads"; return 1; }
import json, sys
to2, to3, to4, fwd2, fwd3, chk2, chk3 = map(int, sys.argv[1].split())
total = to2 + to3 + to4
# R/N = 25 Mbit/s for 4 s, and the meter's burst (10 ms at the 50 Mbit/s link rate).
direct = 25e6 / 8 * 4 + 62500
via = (total - direct) / 2
print(f"total {total} B; direct {to4} (ideal {direct:.0f}), via n2 {to2}, via n3 {to3} (ideal {via:.0f} each)")
for got, want, what in ((to4, direct, "direct"), (to2, via, "via n2"), (to3, via, "via n3")):
    dev = abs(got - want) / want
    print(f"{what}: {100 * dev:.1f}% from ideal")
    assert dev <= 0.10, what
assert fwd2 > 0 and fwd3 > 0, "intermediates forwarded nothing"
assert chk2 == 0 and chk3 == 0, "a transit node checked IP headers"
r = json.load(open(sys.argv[2]))
print("per-packet VLB reordering:", r)
# The experiment means something only if balancing packet by packet does reorder.
assert r["reordered_percent"] > 1, "per-packet VLB did not reorder this traffic"
PY
  cluster_down
}

# With flowlets (δ = 100 ms) the same load is reordered at most 0.1% (RouteBricks' RB4:
# 0.15%), no link is loaded beyond its capacity, and nothing is lost.
test_cluster_flowlet_reordering() {
  cluster_up || return 1
  cl_udp_run flowlet || return 1
  local loads
  loads=$(cl_link_loads)
  echo "n1 -> n2 n3 n4 bytes, n2 n3 forwarded, n2 n3 checked: $loads"
  echo "flowlets: hits $(cl_read n1 vlb.flowlet_hits) new $(cl_read n1 vlb.flowlet_new) moved $(cl_read n1 vlb.flowlet_moved)"
  python3 - "$loads" "$NETNS_TMP/flowlet-reorder.json" <<'PY' || { cl_fail "flowlet reordering"; return 1; }
import json, sys
to2, to3, to4 = map(int, sys.argv[1].split()[:3])
cap = 50e6 / 8 * 4 * 1.1
for b, what in ((to2, "n2"), (to3, "n3"), (to4, "n4")):
    assert b <= cap, f"link to {what} above capacity: {b}"
r = json.load(open(sys.argv[2]))
print("flowlet reordering:", r)
assert r["lost"] <= 0.001 * r["ingress_packets"], "packets lost"
assert r["reordered_percent"] <= 0.1, "more than 0.1% reordered"
PY
  cluster_down
}

# cl_ping_loss FROM TO COUNT INTERVAL: packets lost of COUNT pings.
cl_ping_loss() {
  local out
  out=$(clx "$1" ping -q -c "$3" -i "$4" -W 1 "$2" 2>&1)
  echo "$out" | awk '/packets transmitted/ {print $1 - $4}'
}

# An internal link fails (n1's end of the n1–n4 link set down) while h1 pings h4: within
# the dead interval both ends stop using it and traffic goes through n2 and n3; then a node
# fails (n3's process killed): the others stop using it, hosts on live nodes still reach
# each other, and packets for the dead node are dropped and counted.
test_cluster_failover() {
  cluster_up || return 1
  clx n1-h0 ping -c 3 -i 0.2 -W 2 "$(host_addr 4)" >/dev/null || { cl_fail "initial ping"; return 1; }
  clx n1-h0 ping -q -c 300 -i 0.01 -W 1 "$(host_addr 4)" >"$NETNS_TMP/ping-during.txt" 2>&1 &
  local pinger=$!
  NETNS_PIDS+=("$pinger")
  sleep 1
  clx n1 ip link set to-n4 down
  wait "$pinger"
  cat "$NETNS_TMP/ping-during.txt" | tail -2
  local lost
  lost=$(awk '/packets transmitted/ {print $1 - $4}' "$NETNS_TMP/ping-during.txt")
  echo "lost $lost of 300 pings (10 ms apart) across the link failure"
  # Hellos every 10 ms, dead after 50 ms: a handful of pings (each way) may be lost.
  [ "$lost" -le 15 ] || { cl_fail "lost $lost pings across the failure"; return 1; }
  [ "$(cl_read n1 vlb.links)" = "self up up down" ] || { cl_fail "n1 links: $(cl_read n1 vlb.links)"; return 1; }
  [ "$(cl_read n4 vlb.links)" = "down up up self" ] || { cl_fail "n4 links: $(cl_read n4 vlb.links)"; return 1; }
  lost=$(cl_ping_loss n1-h0 "$(host_addr 4)" 50 0.02)
  [ "$lost" = 0 ] || { cl_fail "lost $lost pings with the link down"; return 1; }
  echo "n1: $(cl_read n1 vlb.via | awk '{print "via n2", $2, "via n3", $3}')"

  # Node n3 fails.
  local pid3
  pid3=$(awk '$1 == "pid" && $3 == "n3" {print $2}' "$CL_STATE/state")
  [ -n "$pid3" ] || { cl_fail "no pid for n3 in the state file"; return 1; }
  kill -9 "$pid3"
  sleep 0.3
  [ "$(cl_read n1 vlb.links)" = "self up down down" ] || { cl_fail "n1 links after n3 died: $(cl_read n1 vlb.links)"; return 1; }
  lost=$(cl_ping_loss n1-h0 "$(host_addr 4)" 50 0.02)
  [ "$lost" = 0 ] || { cl_fail "h1 -> h4 lost $lost pings with n3 down"; return 1; }
  lost=$(cl_ping_loss n2-h0 "$(host_addr 1)" 20 0.02)
  [ "$lost" = 0 ] || { cl_fail "h2 -> h1 lost $lost pings with n3 down"; return 1; }
  lost=$(cl_ping_loss n1-h0 "$(host_addr 3)" 10 0.02)
  [ "$lost" = 10 ] || { cl_fail "h3 answered with n3 down"; return 1; }
  local unreach
  unreach=$(cl_read n1 vlb.drop_details | awk '/no live path/ {print $1}')
  echo "n1 dropped $unreach packets for the dead node (no live path)"
  [ "${unreach:-0}" -ge 10 ] || { cl_fail "drops for the dead node not counted"; return 1; }
  cluster_down
}
