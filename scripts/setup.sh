#!/usr/bin/env bash
# Installs what building and testing Lathe needs on Debian/Ubuntu. Idempotent: packages already
# present are not touched. Uses sudo when not root.
#   scripts/setup.sh            system packages for the build and tests
#   scripts/setup.sh --python   also .venv with the Python tools the benchmarks compare against
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build ccache pkg-config
  clang
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libzip-dev zlib1g-dev libssl-dev
  libgtest-dev libgmock-dev librapidcheck-dev
  libboost-graph-dev
  qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libgl-dev libgraphviz-dev libqcustomplot-dev libqcustomplot2.1-qt6 qt6-svg-dev fonts-dejavu-core fonts-wqy-microhei
  python3 python3-venv python3-dev
  strace
)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
updated=""
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "setup: installing ${missing[*]}"
  [ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_missing "${packages[@]}"
# libFuzzer and the sanitizer runtimes are versioned with the distribution's default clang
# (14 on Debian 12, 19 on Debian 13).
clang_major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
install_missing "libclang-rt-${clang_major}-dev" "libfuzzer-${clang_major}-dev"

if [ "${1:-}" = "--python" ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  .venv/bin/pip install -q -r scripts/requirements.txt
  # Triton's interpreter, apart from .venv: see scripts/requirements-triton-interpreter.txt.
  if [ ! -d .venv/triton-interpreter/triton ]; then
    .venv/bin/pip install -q --no-deps --target .venv/triton-interpreter -r scripts/requirements-triton-interpreter.txt
  fi
fi
