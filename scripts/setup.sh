#!/usr/bin/env bash
# Installs everything Sluice's build and tests need: Debian packages (packet tools, tshark,
# network namespaces) and a project-local Python venv with scapy and pytest. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(tshark tcpdump iproute2 iputils-ping traceroute iperf3 ethtool netcat-openbsd
              python3-venv tcpreplay socat nftables chromium chromium-driver
              prometheus bird2)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import scapy, pytest, cryptography, selenium' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check 'scapy==2.6.1' 'pytest>=8,<9' matplotlib cryptography selenium
fi
# The live web view's layout library (crates/http/web/package-lock.json), embedded at build
# time by crates/http/build.rs.
if [ ! -d crates/http/web/node_modules ]; then
  if ! command -v npm >/dev/null; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
  fi
  npm ci --prefix crates/http/web --no-audit --no-fund
fi
echo "setup: ok"
