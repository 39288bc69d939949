#!/usr/bin/env bash
# The runtime on the GPU machine, in one call: builds lathe._native there (its image has every
# build dependency but libzip, carried as .device/deps: see prepare_deps.sh), then runs bench.py.
#   device run, carry [".device/deps"]:  bash bench/device/runtime/run.sh [bench.py options]
set -euo pipefail
cd "$(dirname "$0")/../../.."
deps=$PWD/.device/deps
build=/tmp/lathe-runtime-build
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_BUILD_TESTS=OFF -DLATHE_BUILD_STUDIO=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$deps" >"${OUT:-/tmp}/cmake.log" 2>&1 \
  || { tail -30 "${OUT:-/tmp}/cmake.log"; exit 1; }
start=$(date +%s)
cmake --build "$build" --target lathe_native -j "$(nproc)" >"${OUT:-/tmp}/build.log" 2>&1 \
  || { tail -30 "${OUT:-/tmp}/build.log"; exit 1; }
echo "native module built in $(( $(date +%s) - start )) s"
export LD_LIBRARY_PATH="$deps/lib:${LD_LIBRARY_PATH:-}" PYTHONPATH="$PWD/runtime/python:${PYTHONPATH:-}"
python3 bench/device/runtime/bench.py "$@"
