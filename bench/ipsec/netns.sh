#!/usr/bin/env bash
# ESP tunnel rates between network namespaces: the topology of tests/netns/scenarios/ipsec.sh
# (h1 -- Sluice gateway A == ESP == Sluice gateway B -- h2, each in its own namespace, veth
# links, AF_PACKET), with iperf3 from h1 to h2: TCP for 5 s, then UDP at full speed with
# 64-byte and 1400-byte IP packets, for each suite. Prints what h2 received.
#
#   sudo bench/ipsec/netns.sh            # uses target/release/sluice (built if missing)
#
# Everything (two gateways, both hosts, iperf3, the kernel's veth work) shares this machine's
# cores: on a 2-vCPU VM the figures are bounded by that, not by the encryption alone (see
# `sluice bench ipsec` for the per-core cost).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
[ "$(id -u)" -eq 0 ] || { echo "must run as root (network namespaces)"; exit 1; }
[ -x "${SLUICE:-target/release/sluice}" ] || cargo build --release -q -p sluice-cli || exit 1
export SLUICE="${SLUICE:-$ROOT/target/release/sluice}"
# What h2's iperf3 received, from the client's JSON report on stdin: "udp" or "tcp".
received() {
  python3 -c '
import json, sys
end = json.load(sys.stdin)["end"]
if sys.argv[1] == "tcp":
    bps = end["sum_received"]["bits_per_second"]
    print("%.2f Gb/s" % (bps / 1e9))
else:
    d = end["sum"]
    got = d["packets"] - d["lost_packets"]
    print("%.1f kpps received (%.1f%% of those sent lost)" % (got / d["seconds"] / 1e3, d["lost_percent"]))
' "$1"
}

for alg in aes-gcm-128 aes-cbc-128-hmac-sha1; do
  (
    # shellcheck disable=SC1091
    source tests/netns/lib.sh
    # shellcheck disable=SC1091
    source tests/netns/scenarios/ipsec.sh
    topo_tunnel || exit 1
    write_keys "$alg"
    start_gateway_a "$alg" || exit 1
    start_gateway_b_sluice "$alg"
    nsbg h2 iperf3 -s >/dev/null
    sleep 1
    nsx h1 ping -c 2 -W 2 198.18.2.2 >/dev/null || { echo "$alg: tunnel down"; exit 1; }
    echo "$alg TCP h1 -> h2: $(nsx h1 iperf3 -c 198.18.2.2 -t 5 --json | received tcp)"
    for len in 36 1372; do
      echo "$alg UDP, $((len + 28))-byte packets: $(nsx h1 iperf3 -c 198.18.2.2 -u -b 0 -l $len -t 5 --json | received udp)"
    done
  )
done
