#!/usr/bin/env bash
# Installs what building and testing Lathe needs on Debian/Ubuntu. Idempotent: packages already
# present are not touched. Uses sudo when not root.
#   scripts/setup.sh            system packages for the build and tests
#   scripts/setup.sh --python   also .venv with the Python tools the benchmarks compare against
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config
  clang libfuzzer-14-dev libclang-rt-14-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libzip-dev zlib1g-dev libssl-dev
  libgtest-dev libgmock-dev
  python3 python3-venv
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--python" ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  .venv/bin/pip install -q -r scripts/requirements.txt
fi
