#!/usr/bin/env bash
# MLFFR benchmark on veth: generator namespace -> router namespace -> sink namespace.
#
#   bench/mlffr/run.sh [SECONDS_PER_STEP] [RATES...]
#
# The generator is Sluice itself (RatedSource -> Queue -> ToDevice, 64-byte UDP frames,
# pinned to CPU 0). The router is either Sluice running the Figure 8 IP router on
# FromDevice/ToDevice (pinned to CPU 1), or Linux's own forwarding on the same topology and
# tuning. Offered and forwarded rates are measured by the kernel's interface counters (the
# generator's tx, the sink's rx), independent of Sluice. The offered rate is stepped up; the
# maximum loss-free forwarding rate (MLFFR) is the highest offered rate forwarded with <0.1%
# loss. Writes results.csv and forwarding.png into bench/mlffr/out/ and prints a summary.
#
# Generator and router share this machine's cores: the figures say so. Needs root.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
[ "$(id -u)" -eq 0 ] || { echo "bench/mlffr: needs root"; exit 1; }

STEP="${1:-2}"
shift || true
RATES=("$@")
[ ${#RATES[@]} -gt 0 ] || RATES=(25000 50000 100000 200000 300000 400000 600000 800000 1200000)

if [ -z "${SLUICE:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  cargo build -q --release -p sluice-cli || exit 1
  SLUICE="$CARGO_TARGET_DIR/release/sluice"
fi
export SLUICE
# shellcheck disable=SC1091
source "$ROOT/tests/netns/lib.sh"
# shellcheck disable=SC1091
source "$ROOT/tests/netns/scenarios/router.sh"

OUT="$HERE/out"
mkdir -p "$OUT"
CSV="$OUT/results.csv"
echo "router,offered_pps,forwarded_pps,gen_tx_pps,loss_pct" >"$CSV"
NCPU=$(nproc)
GEN_CPU=0
RTR_CPU=$((NCPU > 1 ? 1 : 0))

stat_of() { nsx "$1" cat "/sys/class/net/$2/statistics/$3"; }

# 64-byte frame (60 + FCS): h1 -> h2 UDP, to the router's ra MAC.
frame_hex() {
  local dst="$1" src="$2"
  python3 - "$dst" "$src" <<'EOF'
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

run_mode() {
  local mode="$1"
  # Runs in a subshell: its own temporary folder and its own cleanup trap.
  NETNS_TMP="$(mktemp -d /tmp/sluice-mlffr.XXXXXX)"
  SLUICE_LOG="$NETNS_TMP/sluice.log"
  trap netns_cleanup EXIT
  topo_router || return 1
  nsx h2 ip link set eth0 mtu 1500
  if [ "$mode" = sluice ]; then
    local conf
    conf=$(fig8_conf "$(mac_of r ra)" "$(mac_of r rb)" 1500 1500)
    sluice_start r "$conf" || return 1
    taskset -pc "$RTR_CPU" "$SLUICE_PID" >/dev/null
  else
    addr r ra $R_ADDR0/24
    addr r rb $R_ADDR1/24
    nsx r sysctl -qw net.ipv4.ip_forward=1
  fi
  # Warm up ARP both ways.
  nsx h1 ping -c 2 -i 0.2 -W 2 $H2_ADDR >/dev/null || { echo "$mode: no connectivity"; return 1; }
  local fr
  fr=$(frame_hex "$(mac_of r ra)" "$(mac_of h1 eth0)")
  for rate in "${RATES[@]}"; do
    local n=$((rate * STEP))
    local tx0 rx0 tx1 rx1 t0 t1
    tx0=$(stat_of h1 eth0 tx_packets); rx0=$(stat_of h2 eth0 rx_packets); t0=$(date +%s%N)
    nsx h1 taskset -c "$GEN_CPU" "$SLUICE" -e "RatedSource(DATA \"\\<$fr>\", RATE $rate, LIMIT $n, STOP true) -> Queue(20000) -> ToDevice(eth0, POLL busy);" >/dev/null 2>&1
    sleep 0.3
    tx1=$(stat_of h1 eth0 tx_packets); rx1=$(stat_of h2 eth0 rx_packets); t1=$(date +%s%N)
    local sent=$((tx1 - tx0)) got=$((rx1 - rx0))
    # Rates over the generator's sending time (STEP seconds at the requested rate, or longer).
    local secs
    secs=$(python3 -c "print(max($STEP, ($t1 - $t0) / 1e9 - 0.3))")
    python3 - "$mode" "$sent" "$got" "$secs" "$CSV" <<'EOF'
import sys
mode, sent, got, secs, csv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
# Packets the sink received beyond what was sent (ICMP, ARP) are not forwarded traffic.
got = min(got, sent)
loss = 100.0 * (sent - got) / sent if sent else 0.0
with open(csv, 'a') as f:
    f.write('%s,%.0f,%.0f,%.0f,%.3f\n' % (mode, sent / secs, got / secs, sent / secs, loss))
print('%-7s offered %9.0f pps  forwarded %9.0f pps  loss %6.2f%%' % (mode, sent / secs, got / secs, loss))
EOF
  done
  sluice_stop
  netns_cleanup
}

echo "MLFFR on veth, 64-byte frames, ${STEP}s per step; generator on CPU $GEN_CPU, router on CPU $RTR_CPU of $NCPU (shared machine)"
(run_mode sluice)
(run_mode linux)

"$ROOT/.venv/bin/python" - "$CSV" "$OUT/forwarding.png" "$NCPU" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
modes = {}
for r in rows:
    modes.setdefault(r['router'], []).append((float(r['offered_pps']), float(r['forwarded_pps']), float(r['loss_pct'])))
for m, pts in modes.items():
    ok = [o for o, f, l in pts if l < 0.1]
    print('%s: MLFFR %.0f pps (highest offered rate with <0.1%% loss)' % (m, max(ok) if ok else 0))
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for m, pts in modes.items():
        pts.sort()
        ax.plot([p[0] / 1e3 for p in pts], [p[1] / 1e3 for p in pts], 'o-', label=m)
    top = max(p[0] for pts in modes.values() for p in pts) / 1e3
    ax.plot([0, top], [0, top], ':', color='gray', label='ideal')
    ax.set_xlabel('offered load (kpps, 64-byte frames)')
    ax.set_ylabel('forwarded (kpps)')
    ax.set_title('Forwarding rate vs offered load, veth, %s cores shared' % sys.argv[3])
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    print('plot:', sys.argv[2])
except ImportError:
    print('matplotlib missing: no plot')
EOF
echo "csv: $CSV"
