#!/usr/bin/env bash
# `lathe graphs --json` counts equal independent counts from the raw text, on every sample.
# usage: graph_counts.sh LATHE SAMPLES_DIR SOURCE_DIR
set -euo pipefail
lathe=$1 samples=$2 src=$3
shopt -s nullglob
inputs=("$samples"/captures/*.log.gz "$samples"/captures/llama_4l_fsdp_ranks "$samples"/tlparse/*.log
        "$samples"/tlparse/*.txt "$samples"/tlparse/multi_rank_* "$samples"/tlparse/graph_exec_order_tests
        "$samples"/pt2/*.pt2 "$samples"/pt2/hades-pid/exported_program.pt2)
exec python3 "$src/tests/e2e/graph_counts.py" "$lathe" "${inputs[@]}"
