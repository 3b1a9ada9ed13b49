# Scenarios with Sluice's route table following a Linux kernel routing table (KernelRoutes).
#
# h1 (198.18.1.2) -- ra | Sluice router in r | rb -- h2 (198.18.2.2)
#                                            | rc -- h3 (198.18.3.2)
#
# Sluice's only routes are those of kernel table $KR_KTABLE in namespace r, written there with
# `ip route ... table N` (the interface routes before Sluice starts: its first dump; the rest
# while it runs). h2 and h3 both own 198.18.100.1 (on lo), so pings to it are answered
# whichever way Sluice sends them; the counters of Sluice's outputs tell which way it did. The
# router namespace's kernel neither forwards nor owns an address on the data links. Handlers are read through Sluice's ControlSocket (a Unix socket).
#
# bgp.sh builds on these helpers.

KR_KTABLE=100
KR_CTL=""
# More KernelRoutes arguments (", KEYWORD VALUE...").
KR_EXTRA=""

# The ControlSocket client. `read PATH HANDLER [PARAM]` prints a handler's value; `write PATH
# HANDLER VALUE` prints the status line (exit status 0 on a 200 answer); `watch PATH LIMIT_MS
# WANT HANDLER [PARAM] -- CMD...` runs CMD, then reads the handler over one connection every
# 2 ms until it is WANT, and prints the milliseconds from CMD's start (fails after LIMIT_MS).
KR_PY='
import socket, subprocess, sys, time
def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    f = s.makefile("rb")
    f.readline()
    return s, f
def ask(s, f, cmd):
    s.sendall(cmd.encode() + b"\r\n")
    line = f.readline().decode().rstrip()
    while line[3:4] == "-":
        line = f.readline().decode().rstrip()
    if line.startswith("200") and cmd.startswith("READ"):
        n = int(f.readline().split()[1])
        return True, f.read(n).decode().strip()
    return line.startswith("200"), line
mode, path = sys.argv[1], sys.argv[2]
s, f = connect(path)
if mode == "watch":
    limit, want = float(sys.argv[3]), sys.argv[4]
    sep = sys.argv.index("--")
    what = " ".join(sys.argv[5:sep])
    t0 = time.monotonic()
    if subprocess.call(sys.argv[sep + 1:], stdout=subprocess.DEVNULL) != 0:
        sys.exit("command failed: " + " ".join(sys.argv[sep + 1:]))
    while True:
        ok, got = ask(s, f, "READ " + what)
        ms = (time.monotonic() - t0) * 1000
        if ok and got == want:
            print(round(ms))
            sys.exit(0)
        if ms > limit:
            sys.exit(f"{what}: {got!r} after {ms:.0f} ms, expected {want!r}")
        time.sleep(0.002)
ok, out = ask(s, f, mode.upper() + " " + " ".join(sys.argv[3:]))
print(out)
sys.exit(0 if ok else 1)
'
kr_ctl() { timeout 10 python3 -c "$KR_PY" "$1" "$KR_CTL" "${@:2}"; }
kr_read() { kr_ctl read "$@"; }
kr_write() { kr_ctl write "$@"; }

# kr_wait_for WHAT WANT MS: waits until handler read WHAT (`HANDLER [PARAM]`) is WANT, for at
# most MS milliseconds.
kr_wait_for() { timeout 60 python3 -c "$KR_PY" watch "$KR_CTL" "$3" "$2" $1 -- true >/dev/null; }

# kr_change WHAT WANT LABEL CMD...: runs CMD (a route change), after which handler read WHAT
# must become WANT within 1 s; prints the delay.
kr_change() {
  local what="$1" want="$2" label="$3" ms
  shift 3
  ms=$(timeout 60 python3 -c "$KR_PY" watch "$KR_CTL" 3000 "$want" $what -- "$@") ||
    { fail "$label: never became '$want'"; return 1; }
  echo "$label: in Sluice ${ms} ms after the change"
  [ "$ms" -le 1000 ] || { fail "$label: took ${ms} ms (more than 1 s)"; return 1; }
}

# kr_ip ARGS...: the command line of `ip ARGS...` in the router namespace.
kr_ip() { echo ip -n "$(ns_name r)" "$@"; }

# One Ethernet interface of the router: device $1, output $2 of the table, address $3/24.
kr_iface() {
  local dev="$1" port="$2" a="$3" mac
  mac=$(mac_of r "$dev")
  cat <<EOF
in_$dev :: FromDevice($dev) -> cl_$dev :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
out_$dev :: Queue(1000) -> ToDevice($dev);
cl_$dev[0] -> ARPResponder($a $mac) -> out_$dev;
arpq_$dev :: ARPQuerier($a/24, $mac) -> out_$dev;
cl_$dev[1] -> [1]arpq_$dev;
cl_$dev[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
cl_$dev[3] -> Discard;
rt[$port] -> n_$dev :: Counter -> ttl_$dev :: DecIPTTL -> [0]arpq_$dev;
ttl_$dev[1] -> Discard;
EOF
}

# kr_conf: the router: three interfaces, output 3 for blackhole routes, an IPv6 table beside
# (no traffic), both following kernel table $KR_KTABLE of r.
kr_conf() {
  echo "rt :: RadixIPLookup;"
  echo "Idle -> rt6 :: LookupIP6Route; rt6[0] -> Discard; rt6[1] -> Discard; rt6[2] -> Discard;"
  echo "rt[3] -> bh :: Counter -> Discard;"
  echo "kr :: KernelRoutes(rt, TABLE6 rt6, KTABLE $KR_KTABLE, NETNS $(ns_name r),"
  echo "                   DEV ra 0, DEV rb 1, DEV rc 2, BLACKHOLE 3$KR_EXTRA);"
  kr_iface ra 0 198.18.1.1
  kr_iface rb 1 198.18.2.1
  kr_iface rc 2 198.18.3.1
}

# The topology and the kernel table's interface routes (before Sluice starts).
kr_topology() {
  ns_add h1 && router_ns r && ns_add h2 && ns_add h3 || return 1
  veth_link h1 eth0 r ra && veth_link r rb h2 eth0 && veth_link r rc h3 eth0 || return 1
  addr h1 eth0 198.18.1.2/24 && addr h2 eth0 198.18.2.2/24 && addr h3 eth0 198.18.3.2/24
  nsx h1 ip route add default via 198.18.1.1
  nsx h2 ip route add default via 198.18.2.1
  nsx h3 ip route add default via 198.18.3.1
  nsx h2 ip addr add 198.18.100.1/32 dev lo
  nsx h3 ip addr add 198.18.100.1/32 dev lo
  local h
  for h in h1 h2 h3; do host_tune $h eth0; done
  router_tune r ra; router_tune r rb; router_tune r rc
  nsx r ip route add 198.18.1.0/24 dev ra table $KR_KTABLE
  nsx r ip route add 198.18.2.0/24 dev rb table $KR_KTABLE
  nsx r ip route add 198.18.3.0/24 dev rc table $KR_KTABLE
}

# kr_start: Sluice in r (where its devices are; KernelRoutes opens its route socket in r
# through NETNS) with a ControlSocket, once its first dump is in the tables.
kr_start() {
  KR_CTL="$NETNS_TMP/control"
  sluice_start r "$(kr_conf)" -u "$KR_CTL" || return 1
  for _ in $(seq 50); do [ -S "$KR_CTL" ] && break; sleep 0.1; done
  [ -S "$KR_CTL" ] || { fail "no ControlSocket"; return 1; }
  kr_wait_for kr.synced true 3000 >/dev/null || { fail "first dump not in the tables"; return 1; }
}

# ping_ok NS DST: a few pings from NS to DST are answered.
ping_ok() { nsx "$1" ping -c 2 -i 0.2 -W 1 "$2" >/dev/null; }

# Routes added, replaced and deleted in the kernel table reach Sluice within a second and
# steer real traffic: a gateway route through h2, replaced by one through h3, deleted (then
# dropped as "no route"); a multipath route (first hop), a blackhole route (output 3), two
# metrics for one prefix (the lowest wins), a route of another table and one through an
# interface with no port (both ignored); an interface going down (the kernel drops its routes
# silently: Sluice dumps again).
test_kernel_routes_follow() {
  kr_topology || return 1
  kr_start || return 1
  [ "$(kr_read kr.routes)" = 3 ] || { fail "first dump: $(kr_read kr.routes) routes, expected 3"; return; }
  kr_read rt.table
  ping_ok h1 198.18.2.2 || { fail "h1 -> h2 over the dumped routes"; return; }
  ping_ok h1 198.18.3.2 || { fail "h1 -> h3 over the dumped routes"; return; }
  # No route yet: dropped and counted.
  ping_ok h1 198.18.100.1 && { fail "198.18.100.1 answered without a route"; return; }
  local drops c3
  drops=$(kr_read rt.drops)
  [ "$drops" -gt 0 ] || { fail "no-route drops not counted"; return; }

  kr_change "rt.lookup 198.18.100.1" "1 198.18.2.2" "add" \
    $(kr_ip route add 198.18.100.0/24 via 198.18.2.2 dev rb onlink table $KR_KTABLE) || return
  ping_ok h1 198.18.100.1 || { fail "198.18.100.1 through h2"; return; }

  c3=$(kr_read n_rc.count)
  kr_change "rt.lookup 198.18.100.1" "2 198.18.3.2" "replace" \
    $(kr_ip route replace 198.18.100.0/24 via 198.18.3.2 dev rc onlink table $KR_KTABLE) || return
  ping_ok h1 198.18.100.1 || { fail "198.18.100.1 through h3"; return; }
  [ "$(kr_read n_rc.count)" -ge $((c3 + 2)) ] || { fail "pings did not go out rc"; return; }

  kr_change "rt.lookup 198.18.102.1" "1 198.18.2.2" "multipath (first hop)" \
    $(kr_ip route add 198.18.102.0/24 table $KR_KTABLE \
      nexthop via 198.18.2.2 dev rb onlink nexthop via 198.18.3.2 dev rc onlink) || return
  [ "$(kr_read kr.multipath)" -ge 1 ] || { fail "multipath not counted"; return; }

  kr_change "rt.lookup 198.18.103.1" "3" "blackhole" \
    $(kr_ip route add blackhole 198.18.103.0/24 table $KR_KTABLE) || return
  ping_ok h1 198.18.103.1 && { fail "blackhole route answered"; return; }
  [ "$(kr_read bh.count)" -gt 0 ] || { fail "blackhole output got nothing"; return; }

  nsx r ip route add 198.18.104.0/24 via 198.18.2.2 dev rb onlink metric 200 table $KR_KTABLE
  kr_change "rt.lookup 198.18.104.1" "2 198.18.3.2" "lower metric" \
    $(kr_ip route add 198.18.104.0/24 via 198.18.3.2 dev rc onlink metric 100 table $KR_KTABLE) || return
  kr_change "rt.lookup 198.18.104.1" "1 198.18.2.2" "lower metric deleted" \
    $(kr_ip route del 198.18.104.0/24 metric 100 table $KR_KTABLE) || return

  # Another kernel table, and an interface without a DEV port: not followed.
  nsx r ip link add rx type veth peer name rx2
  nsx r ip link set rx up
  nsx r ip route add 198.18.105.0/24 via 198.18.2.2 dev rb onlink table $((KR_KTABLE + 1))
  kr_change kr.skipped 1 "route through an interface without a port (skipped)" \
    $(kr_ip route add 198.18.106.0/24 dev rx table $KR_KTABLE) || return
  [ "$(kr_read rt.lookup 198.18.105.1)" = -1 ] || { fail "route of another table followed"; return; }
  [ "$(kr_read rt.lookup 198.18.106.1)" = -1 ] || { fail "route without a port installed"; return; }

  drops=$(kr_read rt.drops)
  kr_change "rt.lookup 198.18.100.1" "-1" "delete" \
    $(kr_ip route del 198.18.100.0/24 table $KR_KTABLE) || return
  ping_ok h1 198.18.100.1 && { fail "198.18.100.1 answered after the delete"; return; }
  [ "$(kr_read rt.drops)" -gt "$drops" ] || { fail "drops after the delete not counted"; return; }

  # rc down: the kernel removes 198.18.3.0/24 without a message; Sluice dumps again.
  local dumps
  dumps=$(kr_read kr.dumps)
  kr_change "rt.lookup 198.18.3.2" "-1" "interface down (dumped again)" \
    $(kr_ip link set rc down) || return
  [ "$(kr_read kr.dumps)" -gt "$dumps" ] || { fail "no new dump"; return; }
  echo "counters: added $(kr_read kr.added) replaced $(kr_read kr.replaced)" \
    "removed $(kr_read kr.removed) errors $(kr_read kr.errors) overruns $(kr_read kr.overruns)"
  [ "$(kr_read kr.errors)" = 0 ] || { fail "table errors"; return; }
  sluice_alive || fail "sluice died"
}

# IPv6: routes of the same kernel table reach the IPv6 table (LookupIP6Route), link-local
# gateways included.
test_kernel_routes_ipv6() {
  kr_topology || return 1
  nsx r sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.rb.disable_ipv6=0
  nsx r ip -6 route add 2001:db8:100::/48 via fe80::2 dev rb table $KR_KTABLE
  kr_start || return 1
  [ "$(kr_read rt6.lookup 2001:db8:100::7)" = "1 fe80::2" ] || { fail "IPv6 route of the first dump"; return; }
  kr_change "rt6.lookup 2001:db8:200::1" "1 fe80::3" "IPv6 add" \
    $(kr_ip -6 route add 2001:db8:200::/48 via fe80::3 dev rb table $KR_KTABLE) || return
  kr_change "rt6.lookup 2001:db8:100::7" "-1" "IPv6 delete" \
    $(kr_ip -6 route del 2001:db8:100::/48 table $KR_KTABLE) || return
  # IPv4 routes went to the IPv4 table only.
  [ "$(kr_read rt.lookup 198.18.2.2)" = 1 ] || fail "IPv4 route missing"
}

# The route tables' own write handlers through the ControlSocket, as a daemon that drives
# Sluice directly uses them: add (an existing prefix is refused), set (adds or replaces),
# remove (a missing prefix is refused), several routes per write, all or none; beside
# KernelRoutes, whose routes stay.
test_kernel_routes_control_socket() {
  kr_topology || return 1
  kr_start || return 1
  kr_write rt.add 198.18.110.0/24 198.18.2.2 1 || { fail "add"; return; }
  [ "$(kr_read rt.lookup 198.18.110.9)" = "1 198.18.2.2" ] || { fail "added route"; return; }
  ping_ok h1 198.18.110.9 && { fail "nobody owns 198.18.110.9"; return; }
  kr_write rt.add 198.18.110.0/24 2 && { fail "add of an existing prefix accepted"; return; }
  kr_write rt.set 198.18.110.0/24 198.18.3.2 2 || { fail "set"; return; }
  [ "$(kr_read rt.lookup 198.18.110.9)" = "2 198.18.3.2" ] || { fail "set route"; return; }
  kr_write rt.add "198.18.111.0/24 1, 198.18.112.0/24 198.18.3.2 2" || { fail "two routes"; return; }
  [ "$(kr_read rt.lookup 198.18.112.1)" = "2 198.18.3.2" ] || { fail "second of two routes"; return; }
  # All or none: the second prefix is missing, so the first stays.
  kr_write rt.remove "198.18.111.0/24, 198.18.113.0/24" && { fail "remove of a missing prefix accepted"; return; }
  [ "$(kr_read rt.lookup 198.18.111.1)" = 1 ] || { fail "failed remove removed a route"; return; }
  kr_write rt.remove "198.18.110.0/24, 198.18.111.0/24, 198.18.112.0/24" || { fail "remove"; return; }
  [ "$(kr_read rt.lookup 198.18.110.9)" = -1 ] || { fail "removed route still there"; return; }
  # The routes KernelRoutes installed are untouched, and traffic flows.
  [ "$(kr_read kr.routes)" = 3 ] || { fail "kernel routes disturbed"; return; }
  ping_ok h1 198.18.2.2 || fail "h1 -> h2"
}

# A burst of changes larger than the socket's receive buffer (RCVBUF 4096, and Sluice stopped
# while 3,000 routes are added): the kernel reports the overrun, KernelRoutes dumps the table
# again and ends with exactly the kernel's routes; the same for 3,000 deletions.
test_kernel_routes_overrun() {
  KR_EXTRA=", RCVBUF 4096"
  kr_topology || return 1
  kr_start || return 1
  local i
  for i in $(seq 0 2999); do
    echo "route add 198.19.$((i / 256)).$((i % 256))/32 via 198.18.2.2 dev rb onlink table $KR_KTABLE"
  done >"$NETNS_TMP/add"
  sed 's/^route add \([^ ]*\) .*/route del \1 table '"$KR_KTABLE"'/' "$NETNS_TMP/add" >"$NETNS_TMP/del"
  kill -STOP "$SLUICE_PID"
  nsx r ip -batch "$NETNS_TMP/add" || { kill -CONT "$SLUICE_PID"; fail "ip -batch add"; return; }
  kill -CONT "$SLUICE_PID"
  kr_wait_for kr.routes 3003 10000 || { fail "after the burst: $(kr_read kr.routes) routes, expected 3003"; return; }
  kr_wait_for kr.synced true 10000 || { fail "not synced after the burst"; return; }
  [ "$(kr_read kr.overruns)" -gt 0 ] || { fail "no overrun reported"; return; }
  [ "$(kr_read kr.dumps)" -gt 1 ] || { fail "no dump after the overrun"; return; }
  [ "$(kr_read rt.lookup 198.19.11.183)" = "1 198.18.2.2" ] || { fail "last route of the burst"; return; }
  kill -STOP "$SLUICE_PID"
  nsx r ip -batch "$NETNS_TMP/del" || { kill -CONT "$SLUICE_PID"; fail "ip -batch del"; return; }
  kill -CONT "$SLUICE_PID"
  kr_wait_for kr.routes 3 10000 || { fail "after the deletions: $(kr_read kr.routes) routes, expected 3"; return; }
  [ "$(kr_read rt.lookup 198.19.0.1)" = -1 ] || { fail "deleted route still there"; return; }
  echo "overruns $(kr_read kr.overruns), dumps $(kr_read kr.dumps), errors $(kr_read kr.errors)"
  [ "$(kr_read kr.errors)" = 0 ] || fail "table errors"
}
