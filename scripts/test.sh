#!/usr/bin/env bash
# Runs every Sluice test: formatting and lints, Rust unit/behaviour/corpus tests, end-to-end
# pcap tests checked with scapy, and (as root) network-namespace tests with real Linux hosts.
# Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
passed=0
step() {
  local name=$1; shift
  local t0=$SECONDS
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($((SECONDS - t0)) s)"; passed=$((passed + 1))
  else
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"; failed+=("$name")
  fi
}

bash scripts/setup.sh || { echo "setup failed"; exit 1; }

# The suites run the binary `cargo test` builds (the optimised `tests` profile): the shipping
# build's whole-program optimisation would add minutes and test nothing more.
export SLUICE_PROFILE=tests

step "cargo fmt" cargo fmt --all -- --check
step "cargo clippy" cargo clippy --profile tests --workspace --all-targets -q -- -D warnings
step "cargo test" cargo test --profile tests --workspace -q
# Model-checks the lock-free rings with loom (crates/core/src/ring/loom_tests.rs); its own
# target dir, since `--cfg loom` rebuilds everything.
step "loom (rings)" env RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
  cargo test --profile tests -q -p sluice-core --lib ring::loom_tests
step "cargo build" cargo build --profile tests -q -p sluice-cli
step "e2e (scapy)" env SLUICE_SKIP_BUILD=1 .venv/bin/python -m pytest -q tests/e2e
step "hostile input" env SLUICE_SKIP_BUILD=1 .venv/bin/python -m pytest -q tests/hostile
step "differential (Click's recorded outputs)" env SLUICE_SKIP_BUILD=1 .venv/bin/python -m pytest -q tests/differential
if [ -x tests/netns/run.sh ]; then
  if [ "$(id -u)" -eq 0 ]; then
    step "netns" tests/netns/run.sh
  elif [ -n "${CI:-}" ]; then
    echo "netns tests need root"; failed+=("netns (not root)")
  else
    echo "=== netns: not root, run 'sudo scripts/test.sh' to include the network-namespace tests"
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  echo "suites: $passed passed, ${#failed[@]} failed"
  exit 1
fi
echo "suites: $passed passed, 0 failed"
