#!/usr/bin/env bash
# `lathe plan`, `timeline` and `pareto` on every training and inference sample: exit 0, a plan
# bundle that reads back, the same plan on a rerun, and usage / bad-input errors with their codes.
# usage: plan_commands.sh LATHE SAMPLES_DIR SOURCE_DIR
set -uo pipefail
lathe=$1 samples=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# Plan bundles of the same graph are identical apart from the pass timings.
strip_timings() { python3 -c '
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["format"] == "lathe.plan/1", plan["format"]
for step in plan["steps"]:
    step["seconds"] = 0
print(json.dumps(plan, sort_keys=True))' "$1"; }

check_plan() {  # check_plan NAME CAPTURE PIPELINE [GRAPH]
  local name=$1 capture=$2 pipeline=$3 graph=${4:-}
  local args=("$capture" --hw h200 --pipeline "$pipeline" -o "$tmp/$name.json")
  [ -n "$graph" ] && args+=(--graph "$graph")
  if ! "$lathe" plan "${args[@]}" > "$tmp/out" 2> "$tmp/err"; then
    fail "plan $name: $(head -c 400 "$tmp/err")"; return
  fi
  "$lathe" plan "${args[@]/$tmp\/$name.json/$tmp/$name.again.json}" > /dev/null 2>&1
  if [ "$(strip_timings "$tmp/$name.json")" != "$(strip_timings "$tmp/$name.again.json")" ]; then
    fail "plan $name: a rerun gives another plan"; return
  fi
  "$lathe" timeline "$tmp/$name.json" > "$tmp/timeline" 2> "$tmp/err" || { fail "timeline $name: $(head -c 300 "$tmp/err")"; return; }
  "$lathe" timeline "$tmp/$name.json" --csv > "$tmp/timeline.csv" || { fail "timeline --csv $name"; return; }
  local rows; rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["timeline"]["node"]))' "$tmp/$name.json")
  [ "$(($(wc -l < "$tmp/timeline.csv") - 1))" -eq "$rows" ] || { fail "timeline --csv $name: $rows steps expected"; return; }
  # The reuse checks --json gives are the bundle's, each decided as its numbers say.
  "$lathe" timeline "$tmp/$name.json" --json > "$tmp/timeline.json" || { fail "timeline --json $name"; return; }
  python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))["timeline"]; assert t["reuse_holds"]==b["reuse_holds"]; assert all(h["held"]==(h["bytes"]+h["held_over_span"]<=h["program_peak"]) for h in t["reuse_holds"])' \
    "$tmp/timeline.json" "$tmp/$name.json" || { fail "timeline --json $name: reuse holds"; return; }
  echo "ok   $name: $pipeline"
}

training="llama3_8b_2l_tiny_train llama3_8b_2l_train llama3_8b_4l_train llama3_8b_2l_dyntrain gpt2_tiny_train gpt2_train
          mixtral_2l_tiny_train mixtral_2l_train vit_b16_tiny_train"
for s in $training; do
  capture=$samples/captures/$s.log.gz
  check_plan "$s" "$capture" "split,fusion,recompute(policy=torch)"
  check_plan "$s-heuristic" "$capture" "split,recompute(policy=heuristic),offload(policy=heuristic,resident=0.3)"
  check_plan "$s-budget" "$capture" "split,fusion,recompute(policy=budget,memory=64GiB),offload(policy=optimal,resident=0.5)"
  if "$lathe" pareto "$capture" --json > "$tmp/pareto.json" 2> "$tmp/err" &&
     python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["frontier"] and "torch" in d["policies"]; assert all(p["saved_bytes"] <= p["peak_bytes"] and p["offload_peak_bytes"] <= p["peak_bytes"] for p in [*d["frontier"], *d["policies"].values()])' "$tmp/pareto.json"; then
    echo "ok   $s: pareto"
  else
    fail "pareto $s: $(head -c 300 "$tmp/err")"
  fi
done
check_plan fsdp-rank0 "$samples/captures/llama_4l_fsdp_ranks" "split,fusion,recompute(policy=torch)" "rank0:0/0:aot_joint_graph"
for s in llama3_8b_2l_infer llama3_8b_2l_tiny_infer gpt2_infer mixtral_2l_infer; do
  check_plan "$s" "$samples/captures/$s.log.gz" "split,fusion,offload(policy=optimal,resident=0.25)"
done
for s in gpt2_tiny llama3_8b_2l_tiny mixtral_2l_tiny; do
  check_plan "pt2-$s" "$samples/pt2/$s.pt2" "split,fusion"
done

expect() {  # expect CODE DESCRIPTION -- COMMAND...
  local want=$1 what=$2; shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then fail "$what: exit $got, expected $want: $(head -c 300 "$tmp/err")"
  elif [ -s "$tmp/out" ]; then fail "$what: failed but wrote to stdout"
  else echo "ok   $what"; fi
}
tiny=$samples/captures/llama3_8b_2l_tiny_train.log.gz
expect 1 "unknown pass" -- "$lathe" plan "$tiny" --pipeline "split,fuse"
expect 1 "unclosed options" -- "$lathe" plan "$tiny" --pipeline "recompute(policy=torch"
expect 1 "unknown option" -- "$lathe" plan "$tiny" --pipeline "recompute(polcy=torch)"
expect 1 "recompute on an inference graph" -- "$lathe" plan "$samples/captures/llama3_8b_2l_tiny_infer.log.gz" --pipeline recompute
expect 1 "offload before split" -- "$lathe" plan "$tiny" --pipeline "offload"
expect 1 "a value out of its declared range" -- "$lathe" plan "$tiny" --pipeline "split,offload(resident=1.5)"

# A planned peak over the target's memory: written and warned about; with --strict, exit 4.
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["id"]="h200_1mib"; p["hbm_capacity"]["value"]=1<<20; json.dump(p, open(sys.argv[2], "w"))' \
  "$3/resources/hw/h200.json" "$tmp/h200_1mib.json"
if "$lathe" plan "$tiny" --hw "$tmp/h200_1mib.json" -o "$tmp/small.json" > /dev/null 2> "$tmp/err" &&
   grep -q "exceeds the 1.00 MiB" "$tmp/err" && [ -s "$tmp/small.json" ]; then
  "$lathe" plan "$tiny" --hw "$tmp/h200_1mib.json" --strict -o "$tmp/strict.json" > /dev/null 2>&1
  code=$?
  if [ "$code" -eq 4 ] && [ -s "$tmp/strict.json" ] && "$lathe" plan "$tiny" --strict > /dev/null 2>&1; then
    echo "ok   a peak over the card: a warning, exit 4 with --strict, the plan written"
  else
    fail "--strict over the card's memory: exit $code"
  fi
else
  fail "a peak over the card's memory is not warned about: $(head -c 300 "$tmp/err")"
fi

# `lathe passes` lists every pass a pipeline takes, from the declarations the pipeline is checked by:
# the statistics `plan` reports are the ones each pass declares.
if "$lathe" passes --json > "$tmp/passes.json" 2> "$tmp/err" && "$lathe" passes > "$tmp/passes.txt" &&
   "$lathe" plan "$tiny" --pipeline "split,fusion,recompute(policy=torch),offload" --json > "$tmp/plan.json" &&
   python3 -c '
import json, sys
passes = json.load(open(sys.argv[1]))
plan = json.load(open(sys.argv[2]))
names = [p["name"] for p in passes]
assert names == ["split", "fusion", "recompute", "offload"], names
for step in plan["steps"]:
    name = step["step"].split("(")[0]
    declared = {s["name"] for s in passes[names.index(name)]["statistics"]}
    assert set(step["stats"]) <= declared, (name, set(step["stats"]) - declared)
for p in passes:
    assert p["options"] and all(o["help"] for o in p["options"]), p["name"]
    assert all(o["type"] != "choice" or o["choices"] for o in p["options"]), p["name"]
' "$tmp/passes.json" "$tmp/plan.json" 2> "$tmp/err"; then
  echo "ok   passes: $(python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(open(sys.argv[1]))))' "$tmp/passes.json")"
else
  fail "passes: $(head -c 400 "$tmp/err")"
fi
expect 2 "unknown hardware (neither a profile nor a file)" -- "$lathe" plan "$tiny" --hw tpu9
expect 2 "timeline of a capture" -- "$lathe" timeline "$tiny"
printf '{"format": "lathe.plan/9"}' > "$tmp/future.json"
expect 2 "timeline of another plan version" -- "$lathe" timeline "$tmp/future.json"
head -c 2000 "$tmp/llama3_8b_2l_tiny_train.json" > "$tmp/truncated.json"
expect 2 "timeline of a truncated plan" -- "$lathe" timeline "$tmp/truncated.json"
# recompute(policy=file) takes a plan bundle bound to its graph, or a list of the graph's node names.
saved_of() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["recompute"]["saved"]))' "$1"; }
if "$lathe" plan "$tiny" --pipeline "recompute(policy=file,path=$tmp/llama3_8b_2l_tiny_train.json)" -o "$tmp/from_plan.json" > /dev/null 2> "$tmp/err" &&
   [ "$(saved_of "$tmp/from_plan.json")" = "$(saved_of "$tmp/llama3_8b_2l_tiny_train.json")" ]; then
  echo "ok   recompute(policy=file) from a plan bundle keeps its saved set"
else
  fail "recompute(policy=file) from a plan bundle: $(head -c 300 "$tmp/err")"
fi
expect 2 "recompute(policy=file) with the plan of another graph" -- \
  "$lathe" plan "$tiny" --pipeline "recompute(policy=file,path=$tmp/mixtral_2l_tiny_train.json)"
grep -q "fingerprint" "$tmp/err" || fail "a plan of another graph: the error names no fingerprint"
printf '{"saved": ["mm", "no_such_node"]}' > "$tmp/saved.json"
expect 2 "recompute(policy=file) naming a node the graph lacks" -- \
  "$lathe" plan "$tiny" --pipeline "recompute(policy=file,path=$tmp/saved.json)"
grep -q "no_such_node" "$tmp/err" || fail "an unknown saved name: the error does not name it"
# A failed plan leaves no file behind.
"$lathe" plan "$tiny" --pipeline "split,fuse" -o "$tmp/never.json" > /dev/null 2>&1
[ -e "$tmp/never.json" ] && fail "a failed plan wrote its output"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "all plan commands ok"
