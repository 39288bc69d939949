#!/usr/bin/env bash
# The GPU verification harness's host-side logic (bench/device/kernels/test_harness.py): value
# domains drawn from each input's producer, kernel selection for --profile, Nsight Compute CSV
# parsing and its table. No GPU needed. Skipped where the venv has no torch.
# usage: kernel_harness.sh LATHE SAMPLES_DIR SOURCE_DIR
set -uo pipefail
src=$3
python=$src/.venv/bin/python
if ! "$python" -c 'import torch' 2> /dev/null; then
  echo "kernel_harness: no torch in $src/.venv, skipped"
  exit 0
fi
exec "$python" "$src/bench/device/kernels/test_harness.py"
