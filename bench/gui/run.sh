#!/usr/bin/env bash
# Studio benchmarks: builds every bench_gui_* target, runs each offscreen REPEATS times (default 5)
# and prints one Markdown table of medians with the goal and pass/fail (docs/benchmarks.md, Studio).
#   bench/gui/run.sh                                  # in build/default (configured when missing)
#   LATHE_BUILD_DIR=build/release REPEATS=9 bench/gui/run.sh
# Each program prints name<TAB>milliseconds<TAB>goal_ms per measurement; a negative time is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${LATHE_BUILD_DIR:-build/default}
repeats=${REPEATS:-5}
[ -f "$build/build.ninja" ] || cmake --preset default -B "$build" >/dev/null
if ! build_log=$(cmake --build "$build" --target bench_gui 2>&1); then
  echo "$build_log" >&2
  exit 1
fi
export QT_QPA_PLATFORM=offscreen
results=$(mktemp)
trap 'rm -f "$results"' EXIT
found=0
for exe in "$build"/bench/gui/bench_gui_*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  found=1
  for ((run = 0; run < repeats; run++)); do
    "$exe" >>"$results" 2>/dev/null
  done
done
[ "$found" = 1 ] || { echo "run.sh: no bench_gui_* executable in $build/bench/gui" >&2; exit 1; }
python3 - "$results" "$repeats" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    parts = line.rstrip("\n").split("\t")
    if len(parts) != 3:
        continue
    name, ms, goal = parts
    rows.setdefault(name, (float(goal), []))[1].append(float(ms))
print(f"| measurement | median ms (of {sys.argv[2]}) | goal ms | result |")
print("|---|---:|---:|---|")
failed = False
for name, (goal, values) in rows.items():
    median = statistics.median(values)
    ok = min(values) >= 0 and median < goal
    failed |= not ok
    print(f"| {name} | {median:.1f} | {goal:.0f} | {'pass' if ok else 'FAIL'} |")
sys.exit(1 if failed else 0)
PY
