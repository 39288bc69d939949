#!/usr/bin/env bash
# Counts on captures made right now with random dims (see capture_fresh.py), against the
# independent text counter and, for the .pt2, against torch's own node count.
# usage: fresh_captures.sh LATHE SAMPLES_DIR SOURCE_DIR   (needs SOURCE_DIR/.venv with torch)
set -euo pipefail
lathe=$1 src=$3
python=$src/.venv/bin/python
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "fresh_captures: no torch in $src/.venv (scripts/setup.sh --python installs it)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=$("$python" "$src/tests/e2e/capture_fresh.py" "$tmp" 2> "$tmp/capture.err") || { cat "$tmp/capture.err" >&2; exit 1; }
echo "captured: $summary"
python3 "$src/tests/e2e/graph_counts.py" "$lathe" "$tmp"/trace/*.log "$tmp/model.pt2"
want=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["exported_calls"])' "$summary")
got=$("$lathe" graphs --json "$tmp/model.pt2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["calls"])')
[ "$got" = "$want" ] || { echo "FAIL .pt2 calls: lathe $got, torch $want"; exit 1; }
echo "ok   .pt2 calls equal torch's count ($got)"
"$lathe" info "$tmp"/trace/*.log | grep -q "recompiled because" || { echo "FAIL no recompile seen"; exit 1; }
echo "ok   recompile with dynamic shapes seen"
