# Smoke test of the soak benchmark (bench/soak/run.sh): a short run with one and with two
# router threads at a light load. The benchmark itself judges it: both routers start, stay
# up, forward, and keep their memory flat. Sourced by tests/netns/run.sh after lib.sh.

SOAK_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

test_soak_smoke() {
  local out="$NETNS_TMP/soak"
  OUT="$out" "$SOAK_HERE/../../../bench/soak/run.sh" 8 20000 || { fail "soak smoke run"; return 1; }
  [ -s "$out/samples-j1.csv" ] && [ -s "$out/samples-j2.csv" ] || { fail "no samples"; return 1; }
}
