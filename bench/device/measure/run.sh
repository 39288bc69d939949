#!/usr/bin/env bash
# `lathe measure` on the GPU machine, in one call: builds the CLI with lathe_runtime against the
# image's torch (libzip carried as .device/deps: bench/device/runtime/prepare_deps.sh), then runs
# every shared training capture's step node by node on the H200 — the torch policy's plan, its
# gradients checked against the unplanned joint graph's — and writes one lathe.profile/1 per capture.
#   here:   bash bench/device/runtime/prepare_deps.sh && bash bench/device/measure/prepare.sh
#   device: run, carry [".device/deps", ".device/captures"]:  bash bench/device/measure/run.sh
# Results: $OUT/<capture>.profile.json for the four full-size captures, $OUT/measure.jsonl (each
# capture's `lathe measure --json`, its name added), a table on stdout (the device returns 8 files).
set -euo pipefail
cd "$(dirname "$0")/../../.."
deps=$PWD/.device/deps
out=${OUT:-/tmp/lathe-measure}
work=/tmp/lathe-measure-work
mkdir -p "$out" "$work"
build=/tmp/lathe-measure-build
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_BUILD_TESTS=OFF -DLATHE_BUILD_STUDIO=OFF \
  -DLATHE_BUILD_PYTHON=OFF -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$deps" >"$work/cmake.log" 2>&1 \
  || { tail -30 "$work/cmake.log"; exit 1; }
cmake --build "$build" --target lathe -j "$(nproc)" >"$work/build.log" 2>&1 || { grep -m5 -A5 "error" "$work/build.log"; tail -20 "$work/build.log"; exit 1; }
echo "lathe built in $(( $(date +%s) - start )) s"
export LD_LIBRARY_PATH="$deps/lib:${LD_LIBRARY_PATH:-}"
lathe=$build/app/cli/lathe
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for capture in ${CAPTURES:-llama3_8b_2l_train llama3_8b_4l_train mixtral_2l_train gpt2_train llama3_8b_2l_tiny_train mixtral_2l_tiny_train gpt2_tiny_train vit_b16_tiny_train}; do
  graph=0/0:aot_joint_graph
  case $capture in gpt2*) graph=1/0_1:aot_joint_graph ;; esac
  profile="$work/$capture.profile.json"
  case $capture in *tiny*) ;; *) profile="$out/$capture.profile.json" ;; esac
  "$lathe" measure ".device/captures/$capture.log.gz" --graph "$graph" --device cuda --warmup 3 --repeats 10 \
       -o "$profile" --json >"$work/$capture.json" 2>"$work/$capture.err" || true
  if [ -s "$work/$capture.json" ]; then
    python3 - "$capture" "$work/$capture.json" "$out/measure.jsonl" <<'PY'
import json, sys
name, path, jsonl = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.load(open(path))
r["capture"] = name
with open(jsonl, "a") as f:
    f.write(json.dumps(r) + "\n")
g = r.get("gradients", {})
gib = 2 ** 30
print(f"{name:26s} step {r['step_seconds']*1e3:8.2f} ms eager-by-node | plan est {r['estimated_step_seconds']*1e3:7.2f} ms | "
      f"alloc peak {r['allocator_peak_bytes']/gib:7.3f} GiB | live {r['live_peak_bytes']/gib:7.3f} GiB | "
      f"plan own peak {r['planned_step_own_peak_bytes']/gib:7.3f} GiB | grads {g.get('bitwise_equal','-')}/{g.get('compared','-')} "
      f"all_close {g.get('all_close','-')} max|d| {g.get('max_abs_error','-')} nonfinite-ref {g.get('not_finite_in_reference','-')}")
PY
  else
    echo "$capture: FAILED"; tail -5 "$work/$capture.err"
  fi
done
