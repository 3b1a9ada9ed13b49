# Scenarios with Sluice as a NAPT gateway (conf/nat-gateway.click: IPRewriter,
# ICMPPingRewriter, ICMPRewriter, TCPRewriter with FTPPortMapper) between two Linux hosts on a
# private network and a server behind a Linux router in "the world". Sourced by
# tests/netns/run.sh after lib.sh; each test_* function runs in its own subshell.
#
#   h1 198.18.10.100 --+
#                      +-- lan (Linux bridge) -- lan0 | Sluice NAT | wan0 -- x -- srv
#   h2 198.18.10.101 --+      inside 198.18.10.1 (config only)  outside 198.19.20.1
#                                                                 x: 198.19.20.2 / 198.19.30.1
#                                                                 srv: 198.19.30.2
#
# The NAT namespace's kernel owns no address and does not forward: everything crossing it is
# Sluice's work. The world side knows no route to the private network (x and srv route only
# 198.19.0.0/16), so a packet that leaked out with an inside address could not be answered;
# tcpdump captures on the outside wire (x's eth0, next to the NAT) and on the server are
# checked in every test for any 198.18.10.x address, in headers, in quoted ICMP headers and
# in FTP commands. The NAT's handlers are read through its ControlSocket (a Unix socket).
# Timeouts bound every command; lib.sh deletes everything on exit.

NAT_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NAT_CONF="$NAT_HERE/../../../conf/nat-gateway.click"
NAT_TOOLS="$NAT_HERE/../nat_tools.py"
NAT_PY="$(command -v python3)"

NAT_INSIDE=198.18.10.1 NAT_PUBLIC=198.19.20.1
NAT_H1=198.18.10.100 NAT_H2=198.18.10.101
NAT_X0=198.19.20.2 NAT_X1=198.19.30.1 NAT_SRV=198.19.30.2
NAT_CTL=""
NAT_CAPS=()

# nat_py NS ARGS...: tests/netns/nat_tools.py ARGS in namespace NS, at most 60 s.
nat_py() {
  local n="$1"
  shift
  nsx "$n" timeout 60 "$NAT_PY" "$NAT_TOOLS" "$@"
}
# nat_py_bg NS ARGS...: the same in the background (a server), killed at cleanup.
nat_py_bg() {
  local n="$1"
  shift
  nsbg "$n" timeout 60 "$NAT_PY" "$NAT_TOOLS" "$@" >/dev/null
}
# nat_ctl HANDLER: the value of one of the NAT's read handlers.
nat_ctl() { timeout 20 "$NAT_PY" "$NAT_TOOLS" read "$NAT_CTL" "$1"; }
# pcap_count NAME FILTER: frames of capture NAME (wire, server) that FILTER matches.
pcap_count() { tcpdump -n -r "$NETNS_TMP/$1.pcap" "$2" 2>/dev/null | wc -l; }
# same_data A B: the two files hash the same (both hashes printed).
same_data() {
  local a b
  a=$(sha256sum <"$1" | cut -c1-64)
  b=$(sha256sum <"$2" 2>/dev/null | cut -c1-64)
  echo "sha256 $a ${1##*/}, $b ${2##*/}"
  [ "$a" = "$b" ]
}
# wait_size FILE BYTES: up to 5 s for FILE (written by a server) to be complete.
wait_size() {
  for _ in $(seq 50); do
    [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
}

nat_topology() {
  ns_add h1 && ns_add h2 && ns_add lan && router_ns r && ns_add x && ns_add srv || return 1
  # The private network: a Linux bridge joining the two hosts and the NAT's inside port.
  nsx lan ip link add br0 type bridge || return 1
  veth_link h1 eth0 lan p1 && veth_link h2 eth0 lan p2 && veth_link r lan0 lan p0 || return 1
  local p
  for p in p0 p1 p2; do nsx lan ip link set "$p" master br0; router_tune lan "$p"; done
  nsx lan ip link set br0 up
  # The world: the NAT's outside port, router x, the server.
  veth_link r wan0 x eth0 && veth_link x eth1 srv eth0 || return 1
  addr h1 eth0 $NAT_H1/24 && addr h2 eth0 $NAT_H2/24 || return 1
  addr x eth0 $NAT_X0/24 && addr x eth1 $NAT_X1/24 && addr srv eth0 $NAT_SRV/24 || return 1
  nsx x sysctl -qw net.ipv4.ip_forward=1
  nsx h1 ip route add 198.18.0.0/15 via $NAT_INSIDE
  nsx h2 ip route add 198.18.0.0/15 via $NAT_INSIDE
  nsx srv ip route add 198.19.0.0/16 via $NAT_X1
  host_tune h1 eth0; host_tune h2 eth0; host_tune srv eth0
  host_tune x eth0; host_tune x eth1; router_tune x eth0; router_tune x eth1
  router_tune r lan0; router_tune r wan0
}

# start_nat [NAME=VALUE...]: the topology, captures on the outside wire and on the server,
# and Sluice running conf/nat-gateway.click (parameters: devices, Ethernet addresses, and
# NAME=VALUE) with a ControlSocket.
start_nat() {
  local tool
  for tool in tshark tcpdump traceroute nc "$NAT_PY"; do
    command -v "$tool" >/dev/null || { fail "$tool is missing (scripts/setup.sh installs it)"; return 1; }
  done
  nat_topology || return 1
  nat_capture x eth0 wire || return 1
  nat_capture srv eth0 server || return 1
  NAT_CTL="$NETNS_TMP/control"
  sluice_start r "$(cat "$NAT_CONF")" -u "$NAT_CTL" LAN_DEV=lan0 WAN_DEV=wan0 \
    LAN_ETH="$(mac_of r lan0)" WAN_ETH="$(mac_of r wan0)" "$@" || return 1
  for _ in $(seq 50); do [ -S "$NAT_CTL" ] && break; sleep 0.1; done
  [ -S "$NAT_CTL" ] || { fail "no ControlSocket"; return 1; }
  if nsx r ip -4 -o addr show | grep -v ' lo ' | grep -q inet; then
    fail "NAT namespace has addresses"; return 1
  fi
}

# nat_capture NS IF NAME: tcpdump on IF in NS into $NETNS_TMP/NAME.pcap (first 256 bytes of
# each frame: headers, quoted headers and FTP commands), until nat_captures_stop.
nat_capture() {
  local ns="$1" ifc="$2" name="$3" err="$NETNS_TMP/$3.tcpdump"
  nsbg "$ns" timeout 300 tcpdump -i "$ifc" -n -U --immediate-mode -B 32768 -s 256 \
    -w "$NETNS_TMP/$name.pcap" >/dev/null 2>"$err"
  NAT_CAPS+=("${NETNS_PIDS[-1]}:$name")
  for _ in $(seq 50); do grep -q "listening on" "$err" 2>/dev/null && return 0; sleep 0.1; done
  fail "tcpdump on $ns $ifc did not start"; cat "$err"; return 1
}

nat_captures_stop() {
  local c
  sleep 0.3
  for c in "${NAT_CAPS[@]}"; do
    # timeout passes SIGINT on to tcpdump, which then writes out what it holds.
    kill -INT "${c%%:*}" 2>/dev/null
    wait "${c%%:*}" 2>/dev/null
  done
  NAT_CAPS=()
}

# check_outside_captures: on the outside wire and at the server, no inside address anywhere
# (IP and ARP headers, the IP headers ICMP errors quote, FTP PORT arguments), and every IPv4
# address seen is one of the world's or the NAT's public one, which must have been seen.
check_outside_captures() {
  nat_captures_stop
  local name f n addrs bad
  for name in wire server; do
    f="$NETNS_TMP/$name.pcap"
    [ -s "$f" ] || { fail "no $name capture"; return 1; }
    # A capture that missed frames proves nothing.
    grep -q "^0 packets dropped by kernel" "$NETNS_TMP/$name.tcpdump" ||
      { cat "$NETNS_TMP/$name.tcpdump"; fail "the $name capture dropped frames"; return 1; }
    n=$(pcap_count "$name" "")
    echo "$name capture: $n frames"
    [ "$n" -gt 0 ] || { fail "$name capture is empty"; return 1; }
    if [ "$(pcap_count "$name" 'net 198.18.10.0/24')" -ne 0 ]; then
      tcpdump -n -r "$f" 'net 198.18.10.0/24' 2>/dev/null | head
      fail "inside address in a header on the $name capture"; return 1
    fi
    # tshark also reads the headers quoted in ICMP errors.
    addrs=$(tshark -n -r "$f" -T fields -e ip.src -e ip.dst 2>/dev/null | tr ',\t' '\n\n' | sort -u | grep .)
    echo "$name addresses:" $addrs
    bad=$(echo "$addrs" | grep -vxE "$NAT_PUBLIC|$NAT_X0|$NAT_X1|$NAT_SRV")
    [ -z "$bad" ] || { fail "unexpected addresses on the $name capture: $bad"; return 1; }
    echo "$addrs" | grep -qx "$NAT_PUBLIC" || { fail "the public address not seen on $name"; return 1; }
    if grep -aq '198,18,10' "$f"; then fail "an FTP command names the inside host on $name"; return 1; fi
  done
}

# Pings from both inside hosts at once, with the same echo identifier, reach the server:
# ICMPPingRewriter gives each its own identifier on the public address. The gateway answers
# pings of both of its addresses.
test_nat_ping() {
  start_nat || return 1
  local t h ids
  nsx h2 timeout 20 ping -c 5 -i 0.2 -W 2 -e 4242 $NAT_SRV >"$NETNS_TMP/ping2" 2>&1 &
  local p2=$!
  nsx h1 timeout 20 ping -c 5 -i 0.2 -W 2 -e 4242 $NAT_SRV || { fail "ping h1 -> server"; return 1; }
  wait $p2 || { cat "$NETNS_TMP/ping2"; fail "ping h2 -> server"; return 1; }
  cat "$NETNS_TMP/ping2"
  t=$(nat_ctl pr.table)
  echo "$t"
  for h in $NAT_H1 $NAT_H2; do
    echo "$t" | grep -qE "^\($h, $NAT_SRV, 4242\) => \($NAT_PUBLIC, $NAT_SRV, [0-9]+\)" ||
      { fail "no mapping for $h's pings"; return 1; }
  done
  ids=$(echo "$t" | grep -E "^\(198\.18\.10\.10[01], " | sed -E 's/.*=> \([^,]*, [^,]*, ([0-9]+)\).*/\1/')
  [ "$(echo "$ids" | sort -u | wc -l)" -eq 2 ] || { fail "both hosts' pings got the same identifier"; return 1; }
  nsx h1 timeout 10 ping -c 2 -i 0.2 -W 2 $NAT_INSIDE || { fail "ping the gateway's inside address"; return 1; }
  nsx srv timeout 10 ping -c 2 -i 0.2 -W 2 $NAT_PUBLIC || { fail "ping the gateway's public address"; return 1; }
  check_outside_captures || return 1
  [ "$(pcap_count server "icmp[icmptype] == icmp-echo and src host $NAT_PUBLIC and dst host $NAT_SRV")" -ge 10 ] ||
    { fail "the server did not see 10 echo requests from the public address"; return 1; }
  sluice_alive || fail "sluice died"
}

# traceroute from h1 (UDP, the default; ICMP echo; TCP SYNs to a listening port): hop 1 is
# the gateway (its own time exceeded, from its inside address), hop 2 router x, hop 3 the
# server. The time exceeded of x and the server's answers that are ICMP (port unreachable,
# echo reply) are addressed to the public address; the errors quote the rewritten probe and
# ICMPRewriter must translate them back for traceroute to recognise them. From the world,
# a traceroute to the public address sees the gateway expire TTLs with that address.
test_nat_traceroute() {
  start_nat || return 1
  local out mode
  nsbg srv timeout 60 nc -n -l -k $NAT_SRV 5001 >/dev/null
  sleep 0.2
  for mode in "" -I "-T -p 5001"; do
    # shellcheck disable=SC2086
    out=$(nsx h1 timeout 40 traceroute $mode -n -q 1 -w 2 -m 6 $NAT_SRV 2>&1)
    echo "traceroute $mode: $out"
    echo "$out" | grep -qE "^ *1 +$NAT_INSIDE " || { fail "traceroute $mode: hop 1 is not the gateway"; return 1; }
    echo "$out" | grep -qE "^ *2 +$NAT_X0 " || { fail "traceroute $mode: hop 2 is not router x"; return 1; }
    echo "$out" | grep -qE "^ *3 +$NAT_SRV " || { fail "traceroute $mode: hop 3 is not the server"; return 1; }
    echo "$out" | grep -qE "^ *4 " && { fail "traceroute $mode: went past the server"; return 1; }
  done
  nat_ctl icmp_rw.drop_details
  out=$(nsx srv timeout 20 traceroute -n -q 1 -w 2 -m 2 $NAT_PUBLIC 2>&1)
  echo "traceroute from the server: $out"
  echo "$out" | grep -qE "^ *2 +$NAT_PUBLIC " || { fail "no hop 2 (the gateway) from the world"; return 1; }
  check_outside_captures || return 1
  # The world sent its errors to the public address (and only to it), and got the gateway's
  # time exceeded from it.
  [ "$(pcap_count wire "icmp[icmptype] == icmp-timxceed and src host $NAT_X0 and dst host $NAT_PUBLIC")" -ge 3 ] ||
    { fail "no time exceeded from router x on the outside wire"; return 1; }
  [ "$(pcap_count server "icmp[icmptype] == icmp-timxceed and src host $NAT_PUBLIC")" -ge 1 ] ||
    { fail "no time exceeded from the gateway at the server"; return 1; }
  sluice_alive || fail "sluice died"
}

# 10 MB from h1 up to the server and, at the same time, 10 MB from the server down to h2:
# the bytes received hash the same as the bytes sent, and the server saw both connections
# come from the public address.
test_nat_tcp_transfer() {
  start_nat || return 1
  local d="$NETNS_TMP"
  head -c 10000000 /dev/urandom >"$d/up"
  head -c 10000000 /dev/urandom >"$d/down"
  nsbg srv sh -c "timeout 60 nc -n -v -l -N $NAT_SRV 5001 > $d/up.recv 2>$d/nc1.log" >/dev/null
  nsbg srv sh -c "timeout 60 nc -n -v -l -N $NAT_SRV 5002 < $d/down 2>$d/nc2.log" >/dev/null
  sleep 0.3
  nsx h2 sh -c "timeout 60 nc -d $NAT_SRV 5002 > $d/down.recv" &
  local p2=$!
  nsx h1 timeout 60 nc -N $NAT_SRV 5001 <"$d/up" || { fail "nc send from h1"; return 1; }
  wait $p2 || { fail "nc receive at h2"; return 1; }
  wait_size "$d/up.recv" 10000000
  same_data "$d/up" "$d/up.recv" || { fail "upload: received data differs"; return 1; }
  same_data "$d/down" "$d/down.recv" || { fail "download: received data differs"; return 1; }
  cat "$d/nc1.log" "$d/nc2.log"
  grep -q "on $NAT_PUBLIC " "$d/nc1.log" && grep -q "on $NAT_PUBLIC " "$d/nc2.log" ||
    { fail "the server did not see the public address as its peer"; return 1; }
  nat_ctl rw.tcp_table
  check_outside_captures || return 1
  sluice_alive || fail "sluice died"
}

# UDP requests from both hosts, from the same source port 50001 (in the NAT's port range):
# each gets its replies; the server sees two flows from the public address, on two ports,
# the first host's being its own 50001.
test_nat_udp_request_response() {
  start_nat || return 1
  local log="$NETNS_TMP/udp.log" o1 o2 t
  nat_py_bg srv udp-echo $NAT_SRV 7007 "$log"
  sleep 0.3
  o1=$(nat_py h1 udp-ask $NAT_SRV 7007 50001 h1 3 0.1) || { echo "$o1"; fail "h1's requests"; return 1; }
  o2=$(nat_py h2 udp-ask $NAT_SRV 7007 50001 h2 3 0.1) || { echo "$o2"; fail "h2's requests"; return 1; }
  echo "$o1"; echo "$o2"
  [ "$(echo "$o1" | grep -cE "^$NAT_SRV 7007 echo h1-[0-2] seen-from $NAT_PUBLIC 50001$")" -eq 3 ] ||
    { fail "h1's replies (expected to be seen from $NAT_PUBLIC 50001)"; return 1; }
  [ "$(echo "$o2" | grep -cE "^$NAT_SRV 7007 echo h2-[0-2] seen-from $NAT_PUBLIC [0-9]+$")" -eq 3 ] ||
    { fail "h2's replies"; return 1; }
  echo "$o2" | grep -q " 50001$" && { fail "h2 got the port h1's flow holds"; return 1; }
  echo "server saw:"; sort "$log" | uniq -c
  [ "$(wc -l <"$log")" -eq 6 ] || { fail "the server did not get 6 requests"; return 1; }
  [ "$(cut -d' ' -f1 "$log" | sort -u)" = "$NAT_PUBLIC" ] || { fail "the server saw another address"; return 1; }
  [ "$(sort -u "$log" | wc -l)" -eq 2 ] || { fail "the server did not see two flows"; return 1; }
  t=$(nat_ctl rw.udp_table)
  echo "$t"
  [ "$(echo "$t" | grep -cE "^\(198\.18\.10\.10[01], 50001, $NAT_SRV, 7007\) => \($NAT_PUBLIC, ")" -eq 2 ] ||
    { fail "rw.udp_table does not hold both flows"; return 1; }
  check_outside_captures || return 1
  sluice_alive || fail "sluice died"
}

# Active-mode FTP (Python's ftplib, set_pasv(False)) to a server that refuses a PORT naming
# another address than the control connection's peer: STOR, NLST and two RETRs on one
# control connection, from h1 (198.18.10.100), then from h2's second address 198.18.10.7.
# FTPPortMapper rewrites each PORT to the public address and a port it maps in IPRewriter
# (50000-65535), so the server's data connections (from port 20) come back through the NAT.
# The clients' data ports are chosen so that every rewrite changes the command's length:
# h1's "198,18,10,100,128,232" (port 33000) shrinks to "198,19,20,1,P,Q", h2's
# "198,18,10,7,8,0" (port 2048) grows; TCPRewriter must move the sequence and
# acknowledgement numbers of everything after each rewrite. A capture on the NAT's inside
# port shows the commands as the clients sent them.
test_nat_ftp_active() {
  start_nat || return 1
  nat_capture lan p0 inside || return 1
  nsx h2 ip addr add 198.18.10.7/24 dev eth0
  local d="$NETNS_TMP" out n rc src inside outside i
  mkdir -p "$d/ftproot"
  head -c 1000000 /dev/urandom >"$d/ftproot/down.bin"
  nat_py_bg srv ftp-server $NAT_SRV "$d/ftproot" "$d/ftp.log"
  sleep 0.3
  for src in h1:$NAT_H1:33000 h2:198.18.10.7:2048; do
    set -- ${src//:/ }
    mkdir -p "$d/$1"
    head -c 1500000 /dev/urandom >"$d/$1/up.bin"
    out=$(nat_py "$1" ftp-client $NAT_SRV "$d/$1" "$2" "$3" 2>&1)
    rc=$?
    echo "$out"
    [ $rc -eq 0 ] || { cat "$d/ftp.log"; fail "FTP session from $2 failed"; return 1; }
    same_data "$d/$1/up.bin" "$d/ftproot/up.bin" || { fail "STOR: data differs"; return 1; }
    same_data "$d/ftproot/down.bin" "$d/$1/down1.bin" || { fail "RETR 1: data differs"; return 1; }
    same_data "$d/ftproot/down.bin" "$d/$1/down2.bin" || { fail "RETR 2: data differs"; return 1; }
    echo "$out" | grep -q "listing: down.bin up.bin" || { fail "NLST"; return 1; }
  done
  echo "server log:"; cat "$d/ftp.log"
  # The server's view: every command came from the public address, and every PORT named it.
  [ "$(cut -d' ' -f1 "$d/ftp.log" | sort -u)" = "$NAT_PUBLIC" ] || { fail "the server saw another peer"; return 1; }
  n=$(grep -cE "^$NAT_PUBLIC [0-9]+ PORT 198,19,20,1,[0-9]+,[0-9]+$" "$d/ftp.log")
  [ "$n" -eq 8 ] || { fail "expected 8 PORT commands naming the public address, got $n"; return 1; }
  n=$(nat_ctl ftp_ports.mapped)
  [ "$n" = 8 ] || { fail "FTPPortMapper mapped $n PORT commands, not 8"; return 1; }
  nat_ctl tcp_rw.table
  check_outside_captures || return 1
  # The data connections came from the server's port 20 to the public address.
  [ "$(pcap_count wire "tcp[tcpflags] == tcp-syn and src host $NAT_SRV and src port 20 and dst host $NAT_PUBLIC")" -eq 8 ] ||
    { fail "expected 8 data connections from the server's port 20"; return 1; }
  # The commands as sent (inside) and as rewritten (outside), in order: each names its
  # sender and data port inside; h1's shrank, h2's grew.
  inside=($(tshark -n -r "$d/inside.pcap" -Y 'ftp.request.command == "PORT"' -T fields -e ftp.request.arg 2>/dev/null))
  outside=($(tshark -n -r "$d/wire.pcap" -Y 'ftp.request.command == "PORT"' -T fields -e ftp.request.arg 2>/dev/null))
  [ ${#inside[@]} -eq 8 ] && [ ${#outside[@]} -eq 8 ] || { fail "expected 8 PORT commands on each side"; return 1; }
  for i in 0 1 2 3 4 5 6 7; do
    echo "PORT ${inside[$i]} -> ${outside[$i]}"
    if [ $i -lt 4 ]; then
      [ "${inside[$i]}" = "198,18,10,100,128,$((232 + i))" ] || { fail "h1 sent PORT ${inside[$i]}"; return 1; }
      [ ${#outside[$i]} -lt ${#inside[$i]} ] || { fail "h1's PORT did not shrink"; return 1; }
    else
      [ "${inside[$i]}" = "198,18,10,7,8,$((i - 4))" ] || { fail "h2 sent PORT ${inside[$i]}"; return 1; }
      [ ${#outside[$i]} -gt ${#inside[$i]} ] || { fail "h2's PORT did not grow"; return 1; }
    fi
  done
  sluice_alive || fail "sluice died"
}

# Everything at once from both hosts (pings, UDP, TCP, traceroute, FTP): the server and the
# outside wire see the public address only, and the server's own sockets report it as the
# peer of every flow.
test_nat_outside_sees_only_public_address() {
  start_nat || return 1
  local d="$NETNS_TMP" pids=() p bad=0 i=1
  mkdir -p "$d/ftproot" "$d/ftpclient"
  head -c 200000 /dev/urandom >"$d/ftproot/down.bin"
  head -c 200000 /dev/urandom >"$d/ftpclient/up.bin"
  head -c 1000000 /dev/urandom >"$d/tcpdata"
  nat_py_bg srv udp-echo $NAT_SRV 7007 "$d/udp.log"
  nat_py_bg srv ftp-server $NAT_SRV "$d/ftproot" "$d/ftp.log"
  nsbg srv sh -c "timeout 60 nc -n -v -l -N $NAT_SRV 5001 > $d/tcp.recv 2>$d/nc.log" >/dev/null
  sleep 0.3
  nsx h1 timeout 20 ping -c 5 -i 0.2 -W 2 $NAT_SRV >"$d/o1" 2>&1 & pids+=($!)
  nsx h2 timeout 20 ping -c 5 -i 0.2 -W 2 $NAT_SRV >"$d/o2" 2>&1 & pids+=($!)
  nat_py h1 udp-ask $NAT_SRV 7007 40001 h1 3 0.1 >"$d/o3" 2>&1 & pids+=($!)
  nat_py h2 udp-ask $NAT_SRV 7007 40002 h2 3 0.1 >"$d/o4" 2>&1 & pids+=($!)
  nat_py h2 ftp-client $NAT_SRV "$d/ftpclient" >"$d/o5" 2>&1 & pids+=($!)
  nsx h1 timeout 40 traceroute -n -q 1 -w 2 -m 5 $NAT_SRV >"$d/o6" 2>&1 & pids+=($!)
  nsx h1 timeout 60 nc -N $NAT_SRV 5001 <"$d/tcpdata" >"$d/o7" 2>&1 & pids+=($!)
  for p in "${pids[@]}"; do
    wait "$p" || { echo "client $i failed:"; cat "$d/o$i"; bad=1; }
    i=$((i + 1))
  done
  [ $bad -eq 0 ] || { fail "a client failed"; return 1; }
  grep -qE "^ *3 +$NAT_SRV " "$d/o6" || { cat "$d/o6"; fail "traceroute did not reach the server"; return 1; }
  wait_size "$d/tcp.recv" 1000000
  same_data "$d/tcpdata" "$d/tcp.recv" || { fail "TCP data differs"; return 1; }
  same_data "$d/ftpclient/up.bin" "$d/ftproot/up.bin" || { fail "FTP STOR data differs"; return 1; }
  same_data "$d/ftproot/down.bin" "$d/ftpclient/down2.bin" || { fail "FTP RETR data differs"; return 1; }
  # The server's sockets: every peer is the public address.
  cat "$d/udp.log" "$d/nc.log"; cut -d' ' -f1-2 "$d/ftp.log" | sort -u
  [ "$(cut -d' ' -f1 "$d/udp.log" | sort -u)" = "$NAT_PUBLIC" ] || { fail "UDP peers"; return 1; }
  [ "$(cut -d' ' -f1 "$d/ftp.log" | sort -u)" = "$NAT_PUBLIC" ] || { fail "FTP peers"; return 1; }
  grep -q "on $NAT_PUBLIC " "$d/nc.log" || { fail "TCP peer"; return 1; }
  check_outside_captures || return 1
  sluice_alive || fail "sluice died"
}

# UDP mappings expire as configured: UDP_TIMEOUT 4 s (guarantee 1 s), reaped every second.
# A flow kept busy (a request a second for 6 s, longer than the timeout) keeps its mapping
# all along (the table is read every 0.2 s meanwhile); once idle, its mapping is still there
# 2 s after the last packet and gone within timeout + reap interval. A late reply to the
# expired mapping's public port is dropped, and a new request makes a new mapping.
test_nat_udp_mapping_expiry() {
  start_nat UDP_TIMEOUT=4 UDP_GUARANTEE=1 REAP_INTERVAL=1 || return 1
  local log="$NETNS_TMP/udp.log" flow t port t0 el gone="" d0 d1 srvpid busy polls=0 missing=0
  flow="^\($NAT_H1, 50020, $NAT_SRV, 7007\) => \($NAT_PUBLIC, ([0-9]+), $NAT_SRV, 7007\)"
  nat_py_bg srv udp-echo $NAT_SRV 7007 "$log"
  srvpid=${NETNS_PIDS[-1]}
  sleep 0.3
  [ "$(nat_ctl rw.size)" -eq 0 ] || { fail "rw.size is not 0 at the start"; return 1; }
  nat_py h1 udp-ask $NAT_SRV 7007 50020 first 1 || { fail "first request"; return 1; }
  t=$(nat_ctl rw.udp_table); echo "$t"
  echo "$t" | grep -qE "$flow" || { fail "no mapping after the first request"; return 1; }
  port=$(echo "$t" | grep -E "$flow" | sed -E "s/$flow.*/\1/")
  echo "$t" | grep -E "$flow" | grep -qE " exp[0-4]$" || { fail "the mapping does not expire within 4 s"; return 1; }
  [ "$(nat_ctl rw.size)" -eq 1 ] || { fail "rw.size is not 1"; return 1; }
  # Busy for 6 s: one request a second keeps the mapping; it never leaves the table.
  nat_py h1 udp-ask $NAT_SRV 7007 50020 busy 7 1 >"$NETNS_TMP/busy" 2>&1 &
  busy=$!
  while kill -0 $busy 2>/dev/null; do
    polls=$((polls + 1))
    nat_ctl rw.udp_table | grep -qE "$flow" || missing=$((missing + 1))
    sleep 0.2
  done
  wait $busy || { cat "$NETNS_TMP/busy"; fail "busy requests"; return 1; }
  cat "$NETNS_TMP/busy"
  t0=$(sed -n 's/^last-reply-ns //p' "$NETNS_TMP/busy")
  echo "busy phase: the mapping was missing at $missing of $polls reads"
  [ "$polls" -ge 10 ] && [ "$missing" -eq 0 ] || { fail "the busy flow's mapping was not kept"; return 1; }
  t=$(nat_ctl rw.udp_table); echo "$t"
  echo "$t" | grep -E "$flow" | grep -q "$NAT_PUBLIC, $port," || { fail "the busy flow was remapped"; return 1; }
  [ "$(cut -d' ' -f2 "$log" | sort -u)" = "$port" ] || { fail "the server saw another port"; return 1; }
  # Idle: still mapped 2 s after the last packet, gone by 4 s + 1 s reap interval (+ slack).
  sleep "$(awk -v t0="$t0" -v now="$(date +%s%N)" 'BEGIN { s = (t0 + 2e9 - now) / 1e9; print (s > 0 ? s : 0) }')"
  t=$(nat_ctl rw.udp_table)
  el=$((($(date +%s%N) - t0) / 1000000))
  [ $el -lt 3800 ] || { fail "too slow to read the mapping before its expiry ($el ms)"; return 1; }
  echo "$t" | grep -qE "$flow" || { echo "$t"; fail "mapping gone $el ms after the last packet"; return 1; }
  for _ in $(seq 40); do
    sleep 0.1
    t=$(nat_ctl rw.udp_table)
    echo "$t" | grep -qE "$flow" || { gone=$((($(date +%s%N) - t0) / 1000000)); break; }
  done
  [ -n "$gone" ] || { echo "$t"; fail "mapping still there long after the timeout"; return 1; }
  echo "mapping gone ${gone} ms after the last packet"
  [ "$gone" -ge 3900 ] || { fail "mapping removed too early (${gone} ms)"; return 1; }
  [ "$gone" -le 6500 ] || { fail "mapping removed too late (${gone} ms)"; return 1; }
  [ "$(nat_ctl rw.size)" -eq 0 ] || { fail "rw.size is not 0 after expiry"; return 1; }
  # A late reply to the old public port finds no mapping: dropped, not forwarded inside.
  kill "$srvpid"; wait "$srvpid" 2>/dev/null
  d0=$(nat_ctl rw.drops)
  nat_py srv udp-ask $NAT_PUBLIC "$port" 7007 late 1 && { fail "the late reply was answered"; return 1; }
  d1=$(nat_ctl rw.drops)
  nat_ctl rw.drop_details
  [ "$d1" -eq $((d0 + 1)) ] || { fail "the late reply was not dropped by the rewriter"; return 1; }
  # A new request makes a new mapping.
  nat_py_bg srv udp-echo $NAT_SRV 7007 "$log"
  sleep 0.3
  nat_py h1 udp-ask $NAT_SRV 7007 50020 again 1 || { fail "request after expiry"; return 1; }
  nat_ctl rw.udp_table | grep -qE "$flow" || { fail "no mapping after the new request"; return 1; }
  [ "$(nat_ctl rw.size)" -eq 1 ] || { fail "rw.size is not 1 after the new request"; return 1; }
  check_outside_captures || return 1
  sluice_alive || fail "sluice died"
}

# Fragments and path MTU through the NAT. The x -- srv link has MTU 1000 (srv still
# advertises a 1460-byte TCP MSS). A 3000-byte ping and a 4000-byte UDP datagram, fragmented
# by the hosts, are reassembled by the gateway (only a whole datagram has its ports),
# rewritten and fragmented again; the answers come back the same way. A DF ping too big for
# the 1000-byte link draws x's Fragmentation Needed, which ICMPRewriter translates back to
# h1, and h1 learns the path MTU; a TCP upload from h2 learns it the same way (a translated
# error quoting a TCP segment) and completes.
test_nat_fragments_and_pmtu() {
  start_nat || return 1
  nsx x ip link set eth1 mtu 1000
  nsx srv ip link set eth0 mtu 1000
  nsx srv ip route replace 198.19.0.0/16 via $NAT_X1 advmss 1460
  local out big d="$NETNS_TMP"
  nsx h1 timeout 20 ping -c 3 -i 0.3 -W 2 -s 3000 $NAT_SRV || { fail "3000-byte ping"; return 1; }
  nat_py_bg srv udp-echo $NAT_SRV 7007 "$d/udp.log"
  sleep 0.3
  big=$(head -c 4000 /dev/zero | tr '\0' u)
  out=$(nat_py h2 udp-ask $NAT_SRV 7007 50030 "$big" 2 0.2) ||
    { echo "$out" | cut -c1-200; fail "4000-byte UDP request/response"; return 1; }
  [ "$(echo "$out" | grep -cE "^$NAT_SRV 7007 echo u{4000}-[01] seen-from $NAT_PUBLIC [0-9]+$")" -eq 2 ] ||
    { echo "$out" | cut -c1-200; fail "4000-byte UDP replies"; return 1; }
  out=$(nsx h1 timeout 20 ping -c 2 -i 0.3 -W 2 -M do -s 1400 $NAT_SRV 2>&1)
  echo "$out"
  echo "$out" | grep -qE "From $NAT_X0 .*[Ff]rag needed.*mtu = 1000" || { fail "no translated Frag Needed"; return 1; }
  out=$(nsx h1 ip route get $NAT_SRV); echo "$out"
  echo "$out" | grep -q "mtu 1000" || { fail "h1 did not learn the path MTU"; return 1; }
  head -c 2000000 /dev/urandom >"$d/up"
  nsbg srv sh -c "timeout 60 nc -n -l $NAT_SRV 5001 > $d/up.recv" >/dev/null
  sleep 0.3
  nsx h2 timeout 60 nc -N $NAT_SRV 5001 <"$d/up" || { fail "TCP upload from h2"; return 1; }
  wait_size "$d/up.recv" 2000000
  same_data "$d/up" "$d/up.recv" || { fail "TCP upload: data differs"; return 1; }
  out=$(nsx h2 ip route get $NAT_SRV); echo "$out"
  echo "$out" | grep -q "mtu 1000" || { fail "h2's TCP did not learn the path MTU"; return 1; }
  nat_ctl icmp_rw.drop_details
  check_outside_captures || return 1
  sluice_alive || fail "sluice died"
}
