#!/usr/bin/env bash
# Retakes the studio's pictures in docs/studio.md and README.md, headless, from the shared samples
# and our test data, with the studio and CLI `make` built. Run from the repository root; look at
# every picture before committing it.
set -euo pipefail
samples=${LATHE_SAMPLES_DIR:-../shared/samples}
studio=build/default/app/studio/lathe-studio
lathe=build/default/app/cli/lathe
out=docs/images
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

shot() {
  local name=$1
  shift
  # Qt's offscreen chatter goes to a file, shown only when the picture was not taken.
  if ! QT_QPA_PLATFORM=offscreen "$studio" --screenshot "$out/$name.png" "$@" >/dev/null 2>"$scratch/stderr"; then
    cat "$scratch/stderr" >&2
    exit 1
  fi
  echo "$out/$name.png"
}

shot studio-graph --view graph "$samples/captures/llama3_8b_4l_train.log.gz"
shot studio-guards --view guards "$samples/captures/llama3_8b_2l_dyntrain.log.gz"
shot studio-compiles --view compiles "$samples/captures/gpt2_train.log.gz"
shot studio-lifecycle --view lifecycle tests/data/magi_depyf/piecewise
shot studio-snapshot --view snapshot "$samples/snapshots/llama3_8b_2l_train_snapshot.pickle"

"$lathe" plan "$samples/captures/llama3_8b_2l_dyntrain.log.gz" --hw h200 \
  --pipeline "split,fusion,recompute(policy=heuristic)" -o "$scratch/llama3_8b_2l_dyntrain.plan.json" >/dev/null
shot studio-compare --view compare --compare "$scratch/llama3_8b_2l_dyntrain.plan.json" \
  "$samples/captures/llama3_8b_2l_train.log.gz"

shot studio-budget --view budget "$samples/captures/mixtral_2l_train.log.gz"
shot studio-gantt --view gantt "$samples/captures/mixtral_2l_train.log.gz"

step=tests/data/h100_compiled_step
"$lathe" measure "$step/llama3_8b_2l_train.log.gz" --trace "$step/llama3_8b_2l_train.trace.json.gz" \
  -o "$scratch/llama3_8b_2l_train.profile.json" >/dev/null
shot studio-measured --view measured --profile "$scratch/llama3_8b_2l_train.profile.json" "$step/llama3_8b_2l_train.log.gz"
shot studio-offload-run --view offload tests/data/h200_weight_offload_run

"$lathe" plan "$samples/captures/llama3_8b_4l_train.log.gz" --hw h200 \
  --pipeline "split,fusion,recompute(policy=budget,memory=12GiB),offload(policy=optimal,memory=2GiB)" \
  -o "$scratch/llama3_8b_4l_train.plan.json" >/dev/null
shot studio-plan --view pipeline "$scratch/llama3_8b_4l_train.plan.json"

shot studio-zh_CN --language zh_CN --view budget "$samples/captures/mixtral_2l_train.log.gz"
