#!/usr/bin/env bash
# `lathe measure CAPTURE --trace TRACE` on a compiled step captured and profiled in one H100 run
# (tests/data/h100_compiled_step): the profile it writes calibrates `plan` to the device time the
# trace measured; a trace of another run, a missing file and a broken trace are refused with exit
# code 2 and nothing written. Needs no libtorch.
# usage: measure_trace_commands.sh LATHE SAMPLES_DIR SOURCE_DIR
set -uo pipefail
lathe=$1 source=$3
data=$source/tests/data/h100_compiled_step
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

capture=$data/mixtral_2l_train.log.gz
if "$lathe" measure "$capture" --trace "$data/mixtral_2l_train.trace.json.gz" --hw h100_sxm --json \
     -o "$tmp/p.json" > "$tmp/m.json" 2> "$tmp/err"; then
  python3 - "$tmp/m.json" "$tmp/p.json" <<'PY' || fail "measure --trace: figures"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["steps"] == 2 and r["calls"] == 4 and r["launches_timed"] == r["launches"] > 100, r
# Every kernel of the two steps (3.574 ms a step, summed from the trace with Python) is accounted for.
assert abs(r["graph_seconds"] + r["other_seconds"] - 3.574162e-3) < 1e-8, r
p = json.load(open(sys.argv[2]))
assert p["format"] == "lathe.profile/1" and p["device"]["name"] == "NVIDIA H100 80GB HBM3", p["device"]
m = p["graphs"][0]["measured"]
assert m["source"] == "torch.profiler", m["source"]
assert abs(sum(n["seconds"] for n in m["nodes"]) + r["unattributed_seconds"] - r["graph_seconds"]) < 1e-9
PY
  # Calibrated, the plan's GPU time is the measured device time of the graph's kernels, within what the
  # torch policy recomputes.
  "$lathe" plan "$capture" --hw h100_sxm --profile "$tmp/p.json" -o "$tmp/plan.json" > "$tmp/out" 2> "$tmp/err" \
    || fail "plan --profile: $(head -c 300 "$tmp/err")"
  grep -q "^calibrated: .*torch.profiler on NVIDIA H100" "$tmp/out" || fail "plan --profile: no calibration line: $(head -5 "$tmp/out")"
  python3 - "$tmp/plan.json" "$tmp/m.json" <<'PY' || fail "plan --profile: compute seconds"
import json, sys
plan = json.load(open(sys.argv[1]))
measured = json.load(open(sys.argv[2]))
compute = dict(plan["estimates"])["compute_seconds"] if isinstance(plan["estimates"], list) else plan["estimates"]["compute_seconds"]
assert abs(compute - measured["graph_seconds"]) < 0.05 * measured["graph_seconds"], (compute, measured["graph_seconds"])
PY
else
  fail "measure --trace: $(head -c 400 "$tmp/err")"
fi

# Refused, with exit code 2 and no profile: a trace of another run, a file that is no trace.
"$lathe" measure "$capture" --trace "$data/llama3_8b_2l_train.trace.json.gz" -o "$tmp/other.json" > /dev/null 2> "$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "another run's trace: exit $rc, want 2"
grep -q "the trace is of another run" "$tmp/err" || fail "another run's trace: $(head -c 300 "$tmp/err")"
[ ! -e "$tmp/other.json" ] || fail "another run's trace: a profile was written"
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]}' > "$tmp/broken.json"
"$lathe" measure "$capture" --trace "$tmp/broken.json" -o "$tmp/broken.profile.json" > /dev/null 2> "$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "broken trace: exit $rc, want 2"
grep -q "broken.json" "$tmp/err" || fail "broken trace: the error does not name the file: $(head -c 300 "$tmp/err")"
[ ! -e "$tmp/broken.profile.json" ] || fail "broken trace: a profile was written"

[ "$failures" = 0 ] && echo "measure --trace: all checks passed"
exit $((failures > 0))
