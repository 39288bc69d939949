#!/usr/bin/env bash
# Builds nothing: expects the release preset built (make bench does both) and .venv with torch
# (and transformers, to capture bench/out/llama80_train.log.gz when it is missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec .venv/bin/python bench/plan/bench_plan.py "$@"
