#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its seeds; fails on any crash, leak or timeout.
# usage: run_fuzzer.sh FUZZER CORPUS_DIR SEED_DIR SAMPLES_DIR SECONDS
set -euo pipefail
fuzzer=$1 corpus=$2 seeds=$3 samples=$4 seconds=$5
mkdir -p "$corpus"
if [ -d "$seeds" ]; then cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true; fi
# A seed list may name sample files (one path per line, relative to the samples folder).
if [ -f "$seeds.list" ]; then
  while IFS= read -r rel; do
    [ -n "$rel" ] && [ -f "$samples/$rel" ] && head -c 262144 "$samples/$rel" > "$corpus/sample_$(echo "$rel" | tr '/' '_')"
  done < "$seeds.list"
fi
exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=262144 -print_final_stats=1 "$corpus"
