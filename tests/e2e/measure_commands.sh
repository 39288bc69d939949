#!/usr/bin/env bash
# `lathe measure` on the tiny training captures (CPU, libtorch): every joint graph runs, the torch and
# heuristic plans reproduce the unplanned gradients bit for bit, the profile it writes reads back and
# calibrates `plan` and `timeline`; bad input gets its exit code and nothing is written.
# usage: measure_commands.sh LATHE SAMPLES_DIR SOURCE_DIR
set -uo pipefail
lathe=$1 samples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

for spec in llama3_8b_2l_tiny_train:0/0:aot_joint_graph mixtral_2l_tiny_train:0/0:aot_joint_graph \
            gpt2_tiny_train:1/0_1:aot_joint_graph vit_b16_tiny_train:0/0:aot_joint_graph; do
  name=${spec%%:*} graph=${spec#*:}
  capture=$samples/captures/$name.log.gz
  if ! "$lathe" measure "$capture" --graph "$graph" --repeats 1 --warmup 0 --json -o "$tmp/$name.profile.json" \
       > "$tmp/$name.json" 2> "$tmp/err"; then
    fail "measure $name: $(head -c 400 "$tmp/err")"; continue
  fi
  python3 - "$tmp/$name.json" "$tmp/$name.profile.json" <<'PY' || { fail "measure $name: figures"; continue; }
import json, sys
r = json.load(open(sys.argv[1]))
g = r["gradients"]
assert g["compared"] > 0 and g["bitwise_equal"] == g["compared"] and g["all_close"], g
assert r["step_seconds"] > 0 and r["live_peak_bytes"] > 0, r
assert r["allocator_peak_bytes"] is None, "the CPU keeps no allocator statistics"
p = json.load(open(sys.argv[2]))
assert p["format"] == "lathe.profile/1" and p["device"]["name"] == "cpu", p["device"]
m = p["graphs"][0]["measured"]
assert m["source"] == "lathe_runtime cpu" and len(m["nodes"]) > 100, (m["source"], len(m["nodes"]))
assert sum(n["seconds"] for n in m["nodes"]) > 0
PY
  "$lathe" profile "$tmp/$name.profile.json" > /dev/null 2> "$tmp/err" || fail "profile $name: $(head -c 300 "$tmp/err")"
  if ! "$lathe" plan "$capture" --graph "$graph" --profile "$tmp/$name.profile.json" -o "$tmp/$name.plan.json" > "$tmp/out" 2> "$tmp/err"; then
    fail "plan --profile $name: $(head -c 300 "$tmp/err")"; continue
  fi
  grep -q "^calibrated: .* lathe_runtime cpu on cpu" "$tmp/out" || fail "plan --profile $name: no calibration line"
  "$lathe" timeline "$tmp/$name.plan.json" --profile "$tmp/$name.profile.json" --csv > "$tmp/t.csv" 2> "$tmp/err" \
    || fail "timeline --profile $name: $(head -c 300 "$tmp/err")"
  head -1 "$tmp/t.csv" | grep -q "measured_seconds" || fail "timeline --profile $name: no measured column"
  echo "ok   $name"
done

# A plan bundle is measured as its decisions say: the heuristic's saved set, gradients checked.
llama=$samples/captures/llama3_8b_2l_tiny_train.log.gz
"$lathe" plan "$llama" --pipeline "split,fusion,recompute(policy=heuristic)" -o "$tmp/heuristic.json" > /dev/null \
  || fail "plan heuristic"
if "$lathe" measure "$tmp/heuristic.json" --repeats 1 --warmup 0 > "$tmp/out" 2> "$tmp/err"; then
  grep -q "recompute(policy=heuristic): 21 of 21 gradients bitwise equal" "$tmp/out" || fail "measure plan: $(grep plan "$tmp/out")"
else
  fail "measure plan: $(head -c 300 "$tmp/err")"
fi

expect() {  # expect CODE DESCRIPTION ARGS...
  local code=$1 what=$2; shift 2
  "$lathe" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "$what: exit $rc, expected $code ($(head -c 200 "$tmp/err"))"
}
expect 2 "measure of a missing file" measure "$tmp/missing.log.gz"
expect 1 "measure on a device that runs no graphs" measure "$llama" --device mps
expect 2 "a profile of another graph" plan "$samples/captures/mixtral_2l_tiny_train.log.gz" \
  --profile "$tmp/llama3_8b_2l_tiny_train.profile.json"
grep -q "another graph" "$tmp/err" || fail "a profile of another graph: $(head -c 200 "$tmp/err")"
expect 2 "measure -o into a missing folder" measure "$llama" --repeats 1 --warmup 0 -o "$tmp/no/such/profile.json"
[ ! -e "$tmp/no" ] || fail "measure -o into a missing folder created it"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "all measure commands passed"
