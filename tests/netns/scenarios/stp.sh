# Scenarios with Sluice as an 802.1D bridge (conf/ether-switch.click: EtherSwitch and
# EtherSpanTree, Figure 16 of the Click paper) in a loop with two Linux bridges running the
# kernel's STP. Sourced by tests/netns/run.sh after lib.sh; each test_* function runs in its
# own subshell.
#
#        h1 198.18.0.1                      h2 198.18.0.2
#         |                                  |
#        a_h                                b_h
#   [ brA: Linux bridge ]--ab ------- ba--[ brB: Linux bridge ]
#     priority 0x1000 (root)                 priority 0x2000
#        a_s                                b_s
#         |                                  |
#        s0 ------[ sw: Sluice switch ]----- s1
#                  priority 0xdead (Click's)
#                        s2
#                         |
#                        h3 198.18.0.3
#
# Every bridge uses 802.1D's smallest timers (hello 1 s, max age 6 s, forward delay 4 s) and
# every Linux port costs 10, Sluice's 19: brA is the root, brB's root port is ab, and on the
# brB-sw link brB (cost 10 to the root) is designated, so Sluice blocks s1. The namespaces of
# the bridges own no address; lib.sh deletes everything on exit.

STP_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STP_CONF="$STP_HERE/../../../conf/ether-switch.click"
STP_TOOLS="$STP_HERE/../nat_tools.py"
STP_CTL=""

# stp_ctl HANDLER: the value of one of the Sluice switch's read handlers.
stp_ctl() { timeout 20 python3 "$STP_TOOLS" read "$STP_CTL" "$1"; }

# linux_bridge NS PRIORITY PORT...: a bridge br0 with kernel STP in NS over the ports.
linux_bridge() {
  local ns="$1" prio="$2" p
  shift 2
  # Times in hundredths of a second, as the kernel's netlink attributes take them.
  nsx "$ns" ip link add br0 type bridge stp_state 1 priority "$prio" \
    hello_time 100 max_age 600 forward_delay 400 || return 1
  for p in "$@"; do
    nsx "$ns" ip link set "$p" master br0 || return 1
    nsx "$ns" ip link set dev "$p" type bridge_slave cost 10 || return 1
    router_tune "$ns" "$p"
  done
  nsx "$ns" ip link set br0 up
}

# port_state NS PORT: the kernel's STP state of a Linux bridge port (0 disabled, 1 listening,
# 2 learning, 3 forwarding, 4 blocking).
port_state() { nsx "$1" cat "/sys/class/net/br0/brif/$2/state"; }

# loop_frames: frames received on every port of the loop, all bridges together.
loop_frames() {
  local n=0 v
  for v in "brA ab" "brA a_s" "brB ba" "brB b_s" "sw s0" "sw s1"; do
    set -- $v
    n=$((n + $(nsx "$1" cat "/sys/class/net/$2/statistics/rx_packets")))
  done
  echo "$n"
}

# ping_until SRC DST SECONDS: pings once a second until one answer; prints the seconds it
# took; fails after SECONDS.
ping_until() {
  local src="$1" dst="$2" limit="$3" start now
  start=$(date +%s)
  while true; do
    if nsx "$src" ping -c 1 -W 1 "$dst" >/dev/null 2>&1; then
      now=$(date +%s)
      echo $((now - start))
      return 0
    fi
    now=$(date +%s)
    [ $((now - start)) -ge "$limit" ] && return 1
  done
}

# The loop, the hosts, the Linux bridges and Sluice running conf/ether-switch.click; waits
# for the tree to form (two forward delays and a margin).
start_stp() {
  command -v python3 >/dev/null || { fail "python3 is missing"; return 1; }
  ns_add h1 && ns_add h2 && ns_add h3 && ns_add brA && ns_add brB && router_ns sw || return 1
  veth_link brA ab brB ba && veth_link brB b_s sw s1 && veth_link sw s0 brA a_s || return 1
  veth_link h1 eth0 brA a_h && veth_link h2 eth0 brB b_h && veth_link h3 eth0 sw s2 || return 1
  addr h1 eth0 198.18.0.1/24 && addr h2 eth0 198.18.0.2/24 && addr h3 eth0 198.18.0.3/24 || return 1
  host_tune h1 eth0; host_tune h2 eth0; host_tune h3 eth0
  router_tune sw s0; router_tune sw s1; router_tune sw s2
  linux_bridge brA 4096 ab a_s a_h || { fail "bridge brA"; return 1; }
  linux_bridge brB 8192 ba b_s b_h || { fail "bridge brB"; return 1; }
  [ "$(nsx brA cat /sys/class/net/br0/bridge/forward_delay)" = 400 ] ||
    { fail "forward delay of brA: $(nsx brA cat /sys/class/net/br0/bridge/forward_delay)"; return 1; }
  STP_CTL="$NETNS_TMP/control"
  sluice_start sw "$(cat "$STP_CONF")" -u "$STP_CTL" DEV0=s0 DEV1=s1 DEV2=s2 \
    HELLO_TIME=1 MAX_AGE=6 FORWARD_DELAY=4 || return 1
  for _ in $(seq 50); do [ -S "$STP_CTL" ] && break; sleep 0.1; done
  [ -S "$STP_CTL" ] || { fail "no ControlSocket"; return 1; }
  sleep 10
}

# check_tree: brA is everyone's root; every Linux port forwards; Sluice's s0 is its root
# port and forwards, s1 blocks, s2 (the host) forwards.
check_tree() {
  local root p states
  root=$(nsx brA cat /sys/class/net/br0/bridge/bridge_id)
  echo "brA $root; brB root $(nsx brB cat /sys/class/net/br0/bridge/root_id); sw root $(stp_ctl stp.root_id)"
  [ "$(nsx brA cat /sys/class/net/br0/bridge/root_id)" = "$root" ] || { fail "brA is not root"; return 1; }
  [ "$(nsx brB cat /sys/class/net/br0/bridge/root_id)" = "$root" ] || { fail "brB's root"; return 1; }
  [ "$(stp_ctl stp.root_id)" = "$root" ] || { fail "Sluice's root"; return 1; }
  nsx brA bridge link show; nsx brB bridge link show
  for p in "brA ab" "brA a_s" "brA a_h" "brB ba" "brB b_s" "brB b_h"; do
    set -- $p
    [ "$(port_state "$1" "$2")" = 3 ] || { fail "$1 $2 is in state $(port_state "$1" "$2"), not forwarding"; return 1; }
  done
  states=$(stp_ctl stp.port_states)
  echo "Sluice ports:"; echo "$states"
  [ "$states" = "$(printf '0 forwarding root\n1 blocking alternate\n2 forwarding designated')" ] ||
    { fail "Sluice's port states"; return 1; }
}

# check_no_storm: after a broadcast (an ARP request of a host whose neighbours were
# flushed), the loop carries only a few frames a second (BPDUs, the ping).
check_no_storm() {
  local before after
  nsx h1 ip neigh flush all
  nsx h2 ip neigh flush all
  nsx h1 ping -c 1 -W 2 198.18.0.2 >/dev/null || { fail "ping h1 -> h2"; return 1; }
  before=$(loop_frames)
  sleep 3
  after=$(loop_frames)
  echo "frames on the loop in 3 s: $((after - before))"
  [ $((after - before)) -lt 100 ] || { fail "broadcast storm: $((after - before)) frames in 3 s"; return 1; }
}

# The loop converges to the expected tree, carries no storm, and every host reaches every
# other through it (h3 only through Sluice).
test_stp_converges_without_storm() {
  start_stp || return 1
  check_tree || return 1
  check_no_storm || return 1
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.0.2 || { fail "ping h1 -> h2"; return; }
  nsx h1 ping -c 3 -i 0.2 -W 2 198.18.0.3 || { fail "ping h1 -> h3"; return; }
  nsx h3 ping -c 3 -i 0.2 -W 2 198.18.0.2 || { fail "ping h3 -> h2"; return; }
  echo "Sluice drops:"; stp_ctl drops
  [ "$(stp_ctl stp.drops)" = 0 ] || { fail "EtherSpanTree dropped BPDUs"; return; }
  [ "$(stp_ctl stp.received)" -gt 5 ] || { fail "EtherSpanTree received no BPDUs"; return; }
  sluice_alive || fail "sluice died"
}

# The Linux-Linux link of the loop goes down: brB's only way to the root is through Sluice,
# whose blocked port must take over (after brB's information there ages out, then listening
# and learning: max age + 2 x forward delay). Pings resume within those timers and the
# tree is as expected.
test_stp_reconverges_when_a_link_fails() {
  start_stp || return 1
  check_tree || return 1
  nsx h1 ping -c 2 -i 0.2 -W 2 198.18.0.2 >/dev/null || { fail "ping before"; return; }
  nsx brA ip link set ab down
  local took
  took=$(ping_until h1 198.18.0.2 30) || { fail "no ping h1 -> h2 within 30 s of the link failure"; return; }
  echo "ping h1 -> h2 resumed after ${took} s (max age 6 + 2 x forward delay 4 = 14 s)"
  [ "$took" -le 20 ] || { fail "reconvergence took ${took} s"; return; }
  local states
  states=$(stp_ctl stp.port_states)
  echo "Sluice ports:"; echo "$states"
  [ "$states" = "$(printf '0 forwarding root\n1 forwarding designated\n2 forwarding designated')" ] ||
    { fail "Sluice's port states after the failure"; return; }
  [ "$(port_state brB b_s)" = 3 ] || { fail "brB b_s is not forwarding"; return; }
  [ "$(nsx brB cat /sys/class/net/br0/bridge/root_port)" = "$(nsx brB cat /sys/class/net/br0/brif/b_s/port_no | xargs printf '%d')" ] ||
    { fail "brB's root port is not b_s"; return; }
  nsx h3 ping -c 3 -i 0.2 -W 2 198.18.0.2 || { fail "ping h3 -> h2 after the failure"; return; }
  check_no_storm || return 1
  sluice_alive || fail "sluice died"
}

# Sluice's own root port link goes down (Sluice does not see the carrier: the root's
# information ages out): its blocked port becomes the root port and forwards.
test_stp_reconverges_when_sluices_root_link_fails() {
  start_stp || return 1
  check_tree || return 1
  nsx h3 ping -c 2 -i 0.2 -W 2 198.18.0.1 >/dev/null || { fail "ping before"; return; }
  nsx brA ip link set a_s down
  local took
  took=$(ping_until h3 198.18.0.1 30) || { fail "no ping h3 -> h1 within 30 s of the link failure"; return; }
  echo "ping h3 -> h1 resumed after ${took} s (max age 6 + 2 x forward delay 4 = 14 s)"
  [ "$took" -le 20 ] || { fail "reconvergence took ${took} s"; return; }
  local states
  states=$(stp_ctl stp.port_states)
  echo "Sluice ports:"; echo "$states"
  echo "$states" | grep -q '^1 forwarding root$' || { fail "s1 is not the forwarding root port"; return; }
  sluice_alive || fail "sluice died"
}
