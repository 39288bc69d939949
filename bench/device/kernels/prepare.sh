#!/usr/bin/env bash
# Plans and exports the kernels of the llama / mixtral / gpt2 training captures into
# bench/device/kernels/bundles/ (git-ignored), the folder verify_kernels.py reads on the GPU machine.
# Needs nvcc (lathe export compiles the bundles). LATHE=path/to/lathe picks the binary
# (default build/default/app/cli/lathe). Then, on a machine with the GPU:
#   python3 bench/device/kernels/verify_kernels.py        (carry bench/device/kernels/bundles)
set -euo pipefail
cd "$(dirname "$0")/../../.."
lathe=${LATHE:-build/default/app/cli/lathe}
samples=../shared/samples/captures
out=bench/device/kernels/bundles
rm -rf "$out"
mkdir -p "$out"
for capture in llama3_8b_2l_train mixtral_2l_train gpt2_train; do
  "$lathe" plan "$samples/$capture.log.gz" -o "$out/$capture.plan.json" >/dev/null
  "$lathe" export "$out/$capture.plan.json" -o "$out/$capture"
  echo "$capture: $(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len(m["kernels"]), "kernels,", len(m.get("not_generated", [])), "groups not generated")' "$out/$capture/manifest.json")"
done
du -sh "$out"
