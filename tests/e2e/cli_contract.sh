#!/usr/bin/env bash
# The CLI contract: exit codes (0 ok, 1 usage, 2 bad input, 4 budget missed), valid JSON from every subcommand,
# nothing written to stdout on failure.
# usage: cli_contract.sh LATHE SAMPLES_DIR SOURCE_DIR
set -uo pipefail
lathe=$1 samples=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect() {  # expect CODE DESCRIPTION -- COMMAND...
  local want=$1 what=$2; shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $what: exit $got, expected $want: $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  elif [ "$got" -ne 0 ] && [ -s "$tmp/out" ]; then
    echo "FAIL $what: failed but wrote to stdout"
    failures=$((failures + 1))
  else
    echo "ok   $what"
  fi
}

expect_json() {  # expect_json DESCRIPTION -- COMMAND...
  local what=$1; shift 2
  if ! "$@" > "$tmp/out" 2> "$tmp/err"; then
    echo "FAIL $what: $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); return
  fi
  if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out"; then
    echo "ok   $what"
  else
    echo "FAIL $what: output is not JSON"; failures=$((failures + 1))
  fi
}

log=$samples/captures/llama3_8b_2l_dyntrain.log.gz
pt2=$samples/pt2/gpt2_tiny.pt2
snap=$samples/snapshots/llama3_8b_2l_train_snapshot.pickle

expect 1 "no subcommand is a usage error" -- "$lathe"
expect 1 "unknown option is a usage error" -- "$lathe" info --bogus "$log"
expect 2 "missing file is bad input" -- "$lathe" info "$tmp/does-not-exist.log"
head -c 4096 /dev/urandom > "$tmp/garbage.bin"
expect 2 "garbage is bad input" -- "$lathe" info "$tmp/garbage.bin"
: > "$tmp/empty.log"
expect 2 "an empty file is bad input" -- "$lathe" graphs "$tmp/empty.log"
expect 1 "unknown graph id is a usage error" -- "$lathe" show "$log" --graph "9/9:nope"
expect 1 "unknown compile is a usage error" -- "$lathe" guards "$log" --compile 7/7
expect 2 "memory on a log is bad input" -- "$lathe" memory "$log"
tiny=$samples/captures/llama3_8b_2l_tiny_train.log.gz
expect 1 "an unknown command is a usage error" -- "$lathe" nosuchcmd "$log"
if grep -q "unknown command 'nosuchcmd'" "$tmp/err"; then echo "ok   the unknown command is named"
else echo "FAIL the unknown command is not named: $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); fi
expect 1 "an empty pipeline is a usage error" -- "$lathe" plan "$tiny" --pipeline " "
expect 2 "timeline on a capture is bad input" -- "$lathe" timeline "$tiny"
if grep -q "a capture, not a plan bundle" "$tmp/err"; then echo "ok   timeline on a capture says what to run"
else echo "FAIL timeline on a capture: $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); fi
# A budget no plan fits: the plan is written and reported, and the exit status says it missed.
"$lathe" plan "$tiny" --pipeline "split,fusion,recompute(policy=budget,memory=1KiB)" -o "$tmp/missed.json" \
  > "$tmp/out" 2> "$tmp/err"
got=$?
if [ "$got" -eq 4 ] && [ -s "$tmp/missed.json" ] && grep -q "budget" "$tmp/out" && grep -q "does not meet the memory budget" "$tmp/err"; then
  echo "ok   a missed budget exits 4 with the plan written"
else echo "FAIL a missed budget: exit $got: $(head -c 300 "$tmp/err")"; failures=$((failures + 1)); fi

for artifact in "$log" "$pt2" "$snap"; do
  expect_json "info --json $(basename "$artifact")" -- "$lathe" info --json "$artifact"
done
expect_json "graphs --json (log)" -- "$lathe" graphs --json "$log"
expect_json "graphs --json (pt2)" -- "$lathe" graphs --json "$pt2"
expect_json "show --format json" -- "$lathe" show "$log" --graph 0/1:aot_joint_graph --format json
expect_json "guards --json" -- "$lathe" guards --json "$log"
expect_json "memory --json" -- "$lathe" memory --json "$snap"
expect_json "diff --json (two compiles of one log)" -- "$lathe" diff --json "$log" --graph 0/0:aot_joint_graph --graph-b 0/1:aot_joint_graph
expect_json "diff --json (two plans)" -- "$lathe" diff --json "$tmp/missed.json" "$tmp/missed.json"
expect 1 "diff of a plan and a capture is a usage error" -- "$lathe" diff "$tmp/missed.json" "$log"
expect 1 "diff of graphs without --graph is a usage error" -- "$lathe" diff "$log" "$log"
expect 1 "diff of one artifact needs a second graph" -- "$lathe" diff "$log" --graph 0/0:aot_joint_graph
expect 1 "diff of an unknown graph is a usage error" -- "$lathe" diff "$log" --graph 0/0:nope --graph-b 0/1:aot_joint_graph

# show by index and by id print the same graph; dot output is a digraph.
"$lathe" show "$log" --graph 0 > "$tmp/by_index.txt" && "$lathe" show "$log" --graph 0/0:dynamo_output_graph > "$tmp/by_id.txt"
if cmp -s "$tmp/by_index.txt" "$tmp/by_id.txt" && grep -q "def forward" "$tmp/by_id.txt"; then echo "ok   show by index = by id"
else echo "FAIL show by index differs from by id"; failures=$((failures + 1)); fi
"$lathe" show "$pt2" --graph 0 --format dot > "$tmp/graph.dot"
if head -1 "$tmp/graph.dot" | grep -q '^digraph' && grep -q -- '->' "$tmp/graph.dot"; then echo "ok   dot output"
else echo "FAIL dot output"; failures=$((failures + 1)); fi

# An AOT graph's primals are labelled as the planner sees them: parameters and buffers by the
# compile's Dynamo graph, with their modules.
"$lathe" show "$tiny" --graph 0/0:aot_joint_graph --format json > "$tmp/joint.json"
if python3 - "$tmp/joint.json" <<'PY'
import collections, json, sys
nodes = [n for n in json.load(open(sys.argv[1]))["nodes"] if n["op"] == "placeholder"]
roles = collections.Counter(n["role"] for n in nodes)
embed = next(n for n in nodes if n.get("module") == "model.embed_tokens")
sys.exit(0 if roles["parameter"] > 0 and roles["user_input"] == 1 and embed["role"] == "parameter" else 1)
PY
then echo "ok   show --format json names parameters"
else echo "FAIL show --format json labels parameters otherwise"; failures=$((failures + 1)); fi

# `info` counts the guards as `lathe guards` does (the tree's), with Dynamo's metric named beside it.
tree_count=$("$lathe" guards "$log" | sed -n 's/^compile 0\/0: \([0-9]*\) guards.*/\1/p')
if [ -n "$tree_count" ] && "$lathe" info "$log" | grep -q "^compile 0/0 .* guards $tree_count (Dynamo's guard_count [0-9]*)"; then
  echo "ok   info and guards count the same guards"
else echo "FAIL info's guard count is not the guard tree's ($tree_count)"; failures=$((failures + 1)); fi

# Recompile reasons of the dynamic-shape capture reach `info`.
if "$lathe" info "$log" | grep -q "recompiled because: 0/0: tensor"; then echo "ok   recompile reasons shown"
else echo "FAIL recompile reasons missing from info"; failures=$((failures + 1)); fi

# Compile time by phase, caches and graph breaks from torch's compilation_metrics (gpt2's forward:
# entire 18.95 s, backend 15.40 s, Inductor 6.88 s, code generation 3.95 s), in text and JSON.
gpt2="$samples/captures/gpt2_train.log.gz"
"$lathe" info "$gpt2" > "$tmp/gpt2_info.txt"  # read whole: grep -q would end the pipe early (pipefail)
if grep -q "^  by phase: Dynamo 3.55 s · AOTAutograd 8.52 s (joint-graph passes 1.98 s) · Inductor 2.93 s · code generation 3.95 s" "$tmp/gpt2_info.txt" &&
   grep -q "^  caches: FX graph (local) 0 hits, 1 miss" "$tmp/gpt2_info.txt" &&
   "$lathe" info --json "$gpt2" | python3 -c "
import json, sys
c = next(c for c in json.load(sys.stdin)['compiles'] if c['id'] == '1/0_1')['compile_metrics']
assert abs(c['phases_s']['codegen'] - 3.954635) < 1e-9 and c['graph_breaks'] == 1, c
assert c['caches']['fx_graph_local'] == {'hits': 0, 'misses': 1}, c['caches']"; then
  echo "ok   compile time by phase and caches in info"
else echo "FAIL info lacks gpt2's compile time by phase or its caches"; failures=$((failures + 1)); fi

# lathe report: one self-contained HTML file (no script, no external reference) with the plan's two
# pictures, the compiles with their phases and the diagnostics; from a capture and from a plan bundle.
if "$lathe" report "$gpt2" -o "$tmp/report.html" > /dev/null && "$lathe" report "$tmp/missed.json" -o "$tmp/plan_report.html" > /dev/null &&
   python3 - "$tmp/report.html" "$tmp/plan_report.html" <<'PY'
import html.parser, sys
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    class Check(html.parser.HTMLParser):
        svgs, external = 0, []
        def handle_starttag(self, tag, attrs):
            if tag == "svg": Check.svgs += 1
            for name, value in attrs:
                if name in ("src", "href") and value: Check.external.append(value)
            if tag == "script": Check.external.append("script")
    Check().feed(text)
    assert Check.svgs == 2, (path, Check.svgs)  # the memory timeline and the recompute frontier
    assert not Check.external, (path, Check.external)
    assert "<h2>Diagnostics" in text and "Saved for the backward" in text, path
    Check.svgs = 0
assert "<td>1/0_1</td><td>forward</td><td>ok</td><td class=n>18.95 s</td><td class=n>3.55 s</td>" in open(sys.argv[1]).read()
PY
then echo "ok   report: self-contained HTML from a capture and from a plan"
else echo "FAIL lathe report"; failures=$((failures + 1)); fi
expect 2 "report of a missing file is bad input" -- "$lathe" report "$tmp/does-not-exist.log" -o "$tmp/never.html"
if [ -e "$tmp/never.html" ]; then echo "FAIL a failed report left a file"; failures=$((failures + 1)); fi
expect 1 "report without -o is a usage error" -- "$lathe" report "$gpt2"

# A CPU capture planned on a GPU profile says so; a CUDA capture does not.
if "$lathe" plan "$pt2" | grep -q "^note: captured on the CPU" && ! "$lathe" plan "$tiny" | grep -q "captured on the CPU"; then
  echo "ok   CPU capture noted"
else echo "FAIL the CPU capture note is missing, or shown on a CUDA capture"; failures=$((failures + 1)); fi

# A MagiCompiler dump reads like a capture: its models and lifecycle in info, its pieces in graphs,
# its guards by compile, JSON everywhere.
magi=$src/tests/data/magi_depyf
expect_json "info --json on a MagiCompiler dump" -- "$lathe" info --json "$magi/piecewise"
if "$lathe" info "$magi/piecewise" > "$tmp/magi_info.txt" && grep -q ": MagiCompiler dump: 1 model" "$tmp/magi_info.txt" \
   && grep -q "magi_backend_call" "$tmp/magi_info.txt" && grep -q "TensorifyScalarRestartAnalysis" "$tmp/magi_info.txt" \
   && "$lathe" graphs "$magi" > "$tmp/magi_graphs.txt" && grep -q "forward/0:submod_3" "$tmp/magi_graphs.txt" \
   && "$lathe" guards "$magi/graph_break" --compile __resume_at_108_7/0 > "$tmp/magi_guards.txt" \
   && grep -q "TENSOR_MATCH" "$tmp/magi_guards.txt"; then
  echo "ok   MagiCompiler dump: info, graphs and guards"
else echo "FAIL MagiCompiler dump: $(head -c 300 "$tmp/magi_info.txt")"; failures=$((failures + 1)); fi
expect_json "plan --json on a MagiCompiler piece" -- "$lathe" plan --json "$magi/piecewise" --graph forward/0:dynamo_output_graph

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
