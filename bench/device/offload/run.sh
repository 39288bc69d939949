#!/usr/bin/env bash
# Weight offload on the GPU machine, in one call: builds lathe._native there (as the runtime bench
# does), then runs bench.py.
#   device run, carry [".device/deps", ".device/magi"]:  bash bench/device/offload/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
BENCH_SCRIPT=../offload/bench.py exec bash bench/device/runtime/run.sh
