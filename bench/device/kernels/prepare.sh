#!/usr/bin/env bash
# Plans and exports the kernels of the llama / mixtral / gpt2 training captures, and of synthetic
# long-row softmax / log_softmax programs (make_softmax_capture.py: torch.export archives, read by
# lathe's .pt2 loader), into bench/device/kernels/bundles/ (git-ignored), the folder
# verify_kernels.py reads on the GPU machine. Needs nvcc (lathe export compiles the bundles) and
# torch (PYTHON=path/to/python, default .venv/bin/python). LATHE=path/to/lathe picks the binary
# (default build/default/app/cli/lathe). Then, on a machine with the GPU:
#   python3 bench/device/kernels/verify_kernels.py        (carry bench/device/kernels/bundles)
set -euo pipefail
cd "$(dirname "$0")/../../.."
lathe=${LATHE:-build/default/app/cli/lathe}
python=${PYTHON:-.venv/bin/python}
samples=../shared/samples/captures
out=bench/device/kernels/bundles
rm -rf "$out"
mkdir -p "$out"

summary() {  # bundle name, kernel count, groups not generated; kinds of the synthetic ones
  python3 -c 'import collections, json, sys
m = json.load(open(sys.argv[1]))
kinds = collections.Counter(k["kind"] for k in m["kernels"])
print(len(m["kernels"]), "kernels", dict(kinds), "|", len(m.get("not_generated", [])), "groups not generated")' "$1"
}

for capture in llama3_8b_2l_train mixtral_2l_train gpt2_train; do
  "$lathe" plan "$samples/$capture.log.gz" -o "$out/$capture.plan.json" >/dev/null
  "$lathe" export "$out/$capture.plan.json" -o "$out/$capture" >/dev/null
  echo "$capture: $(summary "$out/$capture/manifest.json")"
done

# Synthetic long rows: each program must come out as one normalization kernel.
"$python" bench/device/kernels/make_softmax_capture.py "$out/softmax_pt2" >/dev/null
for archive in "$out"/softmax_pt2/*.pt2; do
  name=$(basename "$archive" .pt2)
  "$lathe" plan "$archive" -o "$out/$name.plan.json" >/dev/null
  "$lathe" export "$out/$name.plan.json" -o "$out/$name" >/dev/null
  line=$(summary "$out/$name/manifest.json")
  echo "$name: $line"
  if [[ $line != "1 kernels {'normalization': 1} | 0 groups not generated" ]]; then
    echo "$name: expected one normalization kernel" >&2
    exit 1
  fi
done
du -sh "$out"
