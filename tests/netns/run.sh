#!/usr/bin/env bash
# Runs every network-namespace scenario: real Linux hosts in namespaces on both sides of a
# Sluice bridge or router (AF_PACKET FromDevice/ToDevice and AF_XDP FromXDPDevice/ToXDPDevice
# on veth pairs, KernelTap host path).
#
#   tests/netns/run.sh [PATTERN]     run the scenarios whose name contains PATTERN
#
# Needs root (namespaces, raw sockets). Missing tools are installed by scripts/setup.sh. The
# sluice binary is built with cargo (the profile $SLUICE_PROFILE, default release) unless $SLUICE names one. Every scenario runs in
# its own subshell with its own namespaces, deleted on exit even when it fails. A scenario that
# needs what this kernel lacks and cannot be installed (ESP in Linux's IPsec) exits 77 with the
# reason as its last line: it is listed as not run. The last line is "N passed, N failed,
# N not run"; the exit status is non-zero if any scenario failed.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

if [ "$(id -u)" -ne 0 ]; then
  echo "tests/netns: must run as root (network namespaces, AF_PACKET)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi

for tool in ip ethtool ping traceroute nc tcpdump iperf3 tshark mergecap; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "installing test prerequisites (scripts/setup.sh)..."
    scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
    break
  fi
done

if [ -z "${SLUICE:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  if ! cargo build -q --profile "${SLUICE_PROFILE:-release}" -p sluice-cli; then
    echo "cannot build sluice"
    echo "0 passed, 1 failed"
    exit 1
  fi
  export SLUICE="$CARGO_TARGET_DIR/${SLUICE_PROFILE:-release}/sluice"
fi

pattern="${1:-}"
SLUICE_NETNS_RUN="$(head -c3 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SLUICE_NETNS_RUN
passed=0
failed=0
failures=()
notrun=()
LOGDIR="$(mktemp -d /tmp/sluice-netns-logs.XXXXXX)"

for f in "$HERE"/scenarios/*.sh; do
  # shellcheck disable=SC1090
  names=$(grep -oE '^test_[a-z0-9_]+' "$f")
  for t in $names; do
    [ -n "$pattern" ] && [[ "$t" != *"$pattern"* ]] && continue
    log="$LOGDIR/$t.log"
    start=$(date +%s%N)
    (
      set -u
      # shellcheck disable=SC1091
      source "$HERE/lib.sh"
      source "$f"
      "$t"
    ) >"$log" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    secs="$((ms / 1000)).$((ms % 1000 / 100))"
    if [ $rc -eq 0 ]; then
      passed=$((passed + 1))
      echo "PASS $t (${secs}s)"
    elif [ $rc -eq 77 ]; then
      notrun+=("$t: $(tail -1 "$log")")
      echo "NOT RUN $t: $(tail -1 "$log")"
    else
      failed=$((failed + 1))
      failures+=("$t")
      echo "FAIL $t (${secs}s, exit $rc)"
      sed 's/^/    | /' "$log" | tail -40
    fi
  done
done

# Nothing may be left behind.
left=$(ip netns list | grep -c "^sluice-$SLUICE_NETNS_RUN" || true)
if [ "$left" -ne 0 ]; then
  echo "FAIL cleanup: $left sluice-* namespaces left behind"
  failed=$((failed + 1))
fi
rm -rf "$LOGDIR"
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
for n in "${notrun[@]}"; do echo "not run: $n"; done
echo "$passed passed, $failed failed, ${#notrun[@]} not run"
[ "$failed" -eq 0 ]
