#!/usr/bin/env bash
# Nsight Compute over chosen kernels: lathe's and Inductor's side by side, one table.
#   bench/device/kernels/profile.sh NAME[,NAME...] [BUNDLE_DIR...]
# NAME: a kernel's name (every bundle that has it), BUNDLE/NAME, or BUNDLE (all its kernels), as
# verify_kernels.py --profile takes them; bundles default to bench/device/kernels/bundles (carry it).
# verify_kernels.py --profile runs each kernel once warmed up, then once more, lathe's launch and
# torch.compile's, between cudaProfilerStart / Stop; ncu profiles only those (lathe_ / triton_
# kernels) with the metrics ncu_table.py reads: duration, DRAM throughput and bytes, achieved and
# theoretical occupancy, registers, grid and block, L1 sectors per global load / store request,
# warp stall reasons. Clocks are left alone (--clock-control none; see the device notes).
# Writes to $OUT (default profile_out): profile.ncu-rep, profile_raw.csv, profile_ncu.log,
# profile_sequence.json, profile.{txt,md,json}; prints the table last.
set -euo pipefail
if [[ $# -lt 1 || $1 == -* ]]; then
  echo "usage: $0 NAME[,NAME...] [BUNDLE_DIR...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
names=$1
shift
out=${OUT:-profile_out}
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1 || true)
if [[ -z $ncu ]]; then
  echo "ncu (Nsight Compute) not found" >&2
  exit 2
fi
metrics=$(cd "$here" && python3 -c 'import ncu_table; print(",".join(ncu_table.METRICS))')
# Inductor compiles in this process: no compile workers for ncu to follow.
export TORCHINDUCTOR_COMPILE_THREADS=1
started=$SECONDS
status=0
"$ncu" --clock-control none --profile-from-start off --target-processes application-only --nvtx \
  --kernel-name 'regex:lathe_|triton_' --metrics "$metrics" --export "$out/profile" --force-overwrite \
  python3 "$here/verify_kernels.py" --profile "$names" --out "$out" "$@" >"$out/profile_ncu.log" 2>&1 || status=$?
grep -E '^(profile |==ERROR==|==WARNING==)|Error' "$out/profile_ncu.log" | head -n 40 || true
echo "ncu run: $((SECONDS - started)) s, exit $status"
if [[ ! -s $out/profile.ncu-rep ]]; then
  echo "no report written; the log: $out/profile_ncu.log" >&2
  tail -n 20 "$out/profile_ncu.log" >&2
  exit 1
fi
"$ncu" --import "$out/profile.ncu-rep" --page raw --csv --print-units base >"$out/profile_raw.csv"
python3 "$here/ncu_table.py" "$out/profile_raw.csv" "$out/profile_sequence.json" --out "$out"
exit "$status"
