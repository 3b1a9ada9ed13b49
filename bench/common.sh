# Shared by the benchmarks that run Sluice between network namespaces (bench/mlffr,
# bench/soak); sourced with $ROOT set to the repository. Builds Sluice unless $SLUICE names a
# binary, and sources tests/netns/lib.sh. Its functions use $RTR_POLL (the router's POLL) and
# $XDP_FRAMES (UMEM frames per AF_XDP socket).

if [ -z "${SLUICE:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  cargo build -q --release -p sluice-cli || exit 1
  SLUICE="$CARGO_TARGET_DIR/release/sluice"
fi
export SLUICE
# shellcheck disable=SC1091
source "$ROOT/tests/netns/lib.sh"

# The benchmark topology's tuning, the same for every router: the senders without TSO (h1's
# eth0, the router's rb), the router's receiving veth ra with GRO and threaded NAPI pinned to
# CPU $1, and a sink h2 that drops the test flow (UDP port 9) in an nftables raw prerouting
# rule, before routing: no socket lookup, no ICMP port-unreachable.
bench_tune() {
  nsx h1 ethtool -K eth0 tso off >/dev/null 2>&1
  nsx r ethtool -K rb tso off >/dev/null 2>&1
  [ -n "$1" ] && napi_pin r ra "$1"
  nsx h2 nft -f - <<'NFT' || { echo "nft failed (scripts/setup.sh installs nftables)"; return 1; }
table ip sink {
  chain pre { type filter hook prerouting priority raw; policy accept; udp dport 9 drop; }
}
NFT
}

# Threaded NAPI for IF in NS, its kthread(s) pinned to CPU. The kthreads (napi/<dev>-<id>)
# are told apart from other namespaces' by appearing when threading is switched on.
napi_pin() {
  local ns="$1" ifc="$2" cpu="$3" before pid
  nsx "$ns" ethtool -K "$ifc" gro on >/dev/null 2>&1 || true
  before=" $(pgrep '^napi/' | tr '\n' ' ') "
  nsx "$ns" sh -c "echo 1 > /sys/class/net/$ifc/threaded" 2>/dev/null || true
  sleep 0.2
  for pid in $(pgrep "^napi/$ifc-"); do
    [[ "$before" == *" $pid "* ]] && continue
    taskset -pc "$cpu" "$pid" >/dev/null 2>&1 || true
  done
}

# The Figure 8 router (scripts/make-ip-conf.py) on the router namespace's ra and rb: AF_XDP
# for MODE sluice-xdp, AF_PACKET otherwise; POLL $RTR_POLL.
router_conf() {
  local mode="$1" conf
  conf=$(python3 "$ROOT/scripts/make-ip-conf.py" --mode device \
    "name=ra,addr=$R_ADDR0/24,eth=$(mac_of r ra),dev=ra" \
    "name=rb,addr=$R_ADDR1/24,eth=$(mac_of r rb),dev=rb") || return 1
  if [ "$mode" = sluice-xdp ]; then
    printf '%s\n' "$conf" | sed -E "s/FromDevice\\((r[ab])\\)/FromXDPDevice(\\1, POLL $RTR_POLL, FRAMES $XDP_FRAMES)/; s/ToDevice\\((r[ab])\\)/ToXDPDevice(\\1, POLL $RTR_POLL, FRAMES $XDP_FRAMES)/"
  else
    printf '%s\n' "$conf" | sed -E "s/FromDevice\\((r[ab])\\)/FromDevice(\\1, POLL $RTR_POLL)/; s/ToDevice\\((r[ab])\\)/ToDevice(\\1, POLL $RTR_POLL)/"
  fi
}

# 64-byte frame (60 + FCS): h1 -> h2 UDP port 9, to the router's ra MAC.
frame_hex() {
  python3 - "$1" "$2" <<'EOF'
import struct, sys
dst = bytes.fromhex(sys.argv[1].replace(':', ''))
src = bytes.fromhex(sys.argv[2].replace(':', ''))
payload = b'\x00' * 18
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + 8 + len(payload), 1, 0, 64, 17, 0,
                 bytes([198, 18, 1, 2]), bytes([198, 18, 2, 2]))
s = sum(struct.unpack('!10H', ip))
while s > 0xffff:
    s = (s & 0xffff) + (s >> 16)
ip = ip[:10] + struct.pack('!H', ~s & 0xffff) + ip[12:]
udp = struct.pack('!HHHH', 1234, 9, 8 + len(payload), 0)
f = dst + src + b'\x08\x00' + ip + udp + payload
print(' '.join('%02x' % b for b in f))
EOF
}
