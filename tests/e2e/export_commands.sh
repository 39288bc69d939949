#!/usr/bin/env bash
# `lathe export` on llama / mixtral / gpt2 training plans (the tiny captures and .pt2 exports, whose
# kernels also run on the CPU against PyTorch): a bundle whose manifest lists every kernel and source, whose library
# exports every launch symbol (nm -D), whose fatbin holds sm_90a and sm_120 machine code, recorded
# in the plan; a second export replaces the first; bad input exits with its code and writes nothing.
# usage: export_commands.sh LATHE SAMPLES_DIR SOURCE_DIR   (skipped where no nvcc is installed)
set -uo pipefail
lathe=$1 samples=$2 src=$3
if ! command -v nvcc > /dev/null && [ ! -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "export_commands: no CUDA toolkit (nvcc), skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
python=$src/.venv/bin/python
"$python" -c 'import torch' 2> /dev/null || python=""

# The .pt2 exports keep softmax and layer_norm whole: the "normalization" kernels.
for capture in captures/llama3_8b_2l_tiny_train.log.gz captures/mixtral_2l_tiny_train.log.gz captures/gpt2_tiny_train.log.gz \
               pt2/gpt2_tiny.pt2 pt2/mixtral_2l_tiny.pt2; do
  s=$(basename "${capture%%.*}")
  [[ $capture == *.pt2 ]] && s+=_pt2
  plan=$tmp/$s.plan.json out=$tmp/$s
  "$lathe" plan "$samples/$capture" -o "$plan" > /dev/null 2> "$tmp/err" || { fail "plan $s: $(head -c 300 "$tmp/err")"; continue; }
  if ! "$lathe" export "$plan" -o "$out" --json > "$tmp/summary.json" 2> "$tmp/err"; then
    fail "export $s: $(head -c 600 "$tmp/err")"; continue
  fi
  nm -D --defined-only "$out/liblathe_kernels.so" | awk '{print $3}' > "$tmp/symbols"
  if ! python3 - "$out" "$tmp/summary.json" "$tmp/symbols" "$plan" <<'EOF'
import json, os, sys
out, summary, symbols, plan = sys.argv[1:]
m = json.load(open(f"{out}/manifest.json"))
s = json.load(open(summary))
exported = set(open(symbols).read().split())
assert m["format"] == "lathe.kernels/1" and m["targets"] == ["sm_90a", "sm_120"], m["targets"]
assert len(m["kernels"]) == s["kernels"] > 0 and len(m["not_generated"]) == s["not_generated"]
assert len(m["kernels"]) + len(m["not_generated"]) == m["groups"] == s["groups"]
sources = {k["source"] for k in m["kernels"]}
assert sources == {f"src/{f}" for f in os.listdir(f"{out}/src") if f.endswith(".cu")}, "sources differ from the manifest"
missing = [k["launch"] for k in m["kernels"] if k["launch"] not in exported]
assert not missing, f"launch symbols not exported: {missing[:5]}"
elf = {e["arch"] for e in s["fatbin"] if e["kind"] == "elf"}
assert elf == {"sm_90a", "sm_120"}, elf
for name in ("kernels.fatbin", "README.md"):
    assert os.path.getsize(f"{out}/{name}") > 0, name
refs = json.load(open(plan))["kernels"]
assert [r["manifest"] for r in refs] == [f"{out}/manifest.json"] and refs[0]["kernels"] == s["kernels"], refs
EOF
  then
    fail "export $s: the bundle does not match its manifest"; continue
  fi
  if [ -n "$python" ]; then
    "$python" "$src/tests/e2e/kernels_cpu_check.py" "$out" > "$tmp/check" 2>&1 || { fail "export $s: $(grep -v '^ok' "$tmp/check" | head -5)"; continue; }
  fi
  echo "ok   $s: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kernels"], "of", s["groups"], "groups")' "$tmp/summary.json")${python:+, agree with PyTorch on the CPU}"
done

# A second export into the same directory replaces the bundle; the plan keeps one reference.
s=llama3_8b_2l_tiny_train
if "$lathe" export "$tmp/$s.plan.json" -o "$tmp/$s" --targets sm_90a > /dev/null 2> "$tmp/err" &&
   python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["targets"] == ["sm_90a"]
p=json.load(open(sys.argv[2])); assert len(p["kernels"]) == 1 and p["kernels"][0]["targets"] == ["sm_90a"]' \
     "$tmp/$s/manifest.json" "$tmp/$s.plan.json"; then
  echo "ok   re-export replaces the bundle"
else
  fail "re-export: $(head -c 300 "$tmp/err")"
fi

# Bad input: the exit code, and nothing written.
expect() {  # expect CODE WHAT -- ARGS...
  local code=$1 what=$2; shift 3
  "$lathe" export "$@" -o "$tmp/bad" > /dev/null 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$what: exit $rc, expected $code ($(head -c 200 "$tmp/err"))"
  elif [ -e "$tmp/bad" ] || ls -a "$tmp" | grep -q '^\.bad\.'; then fail "$what: wrote $tmp/bad"
  elif [ ! -s "$tmp/err" ]; then fail "$what: no message"
  else echo "ok   $what: exit $code"; fi
}
echo '{"format": "lathe.plan/1"' > "$tmp/broken.json"
expect 2 "missing plan" -- "$tmp/none.json"
expect 2 "plan that is not JSON" -- "$tmp/broken.json"
expect 1 "unknown target" -- "$tmp/$s.plan.json" --targets sm_90a,sm_9x
expect 2 "capture without the plan's graph" -- "$tmp/$s.plan.json" --capture "$samples/captures/gpt2_tiny_train.log.gz"
expect 2 "capture of another graph" -- "$tmp/$s.plan.json" --capture "$samples/captures/mixtral_2l_tiny_train.log.gz"
mkdir -p "$tmp/mine" && echo keep > "$tmp/mine/notes.txt"
"$lathe" export "$tmp/$s.plan.json" -o "$tmp/mine" > /dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ] && [ "$(ls "$tmp/mine")" = notes.txt ]; then echo "ok   directory that is not a bundle: exit 1, untouched"
else fail "directory that is not a bundle: exit $rc, now holds $(ls "$tmp/mine" | tr '\n' ' ')"; fi

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
