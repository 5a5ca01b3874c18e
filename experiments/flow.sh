#!/bin/bash
# The flow study (docs/flow.md), resumable: run it again after a kill and each part goes on from
# its last checkpoint. The planner base first, in three stages (pretrain resumes an unfinished run of its config),
# then for seeds 1..3 the broadcast run and its final-turn-only ablation at the same budget; given
# `broadcast` or `final`, only that one's seeds (two such scripts run the two side by side, once
# the base exists). The untrained planner is iteration 0 of every run's held-out evaluation.
# From the repository root:
#   setsid nohup bash experiments/flow.sh > runs/flow.log 2>&1 &   (then its autogroup at nice 19)
set -euo pipefail
credits=("${1:-broadcast}" "${1:-final}")
for base in base-flow base-flow-long base-flow-partial; do
  [ -f "checkpoints/$base/model.json" ] || node bin/coevolve.js pretrain "configs/pretrain/$base.yaml"
done
for seed in 1 2 3; do
  for credit in $(printf '%s\n' "${credits[@]}" | uniq); do
    dir="runs/flow/$credit-s$seed"
    if grep -qs '"status": "done"' "$dir/run.json"; then continue; fi
    if grep -qs lastCheckpoint "$dir/run.json"; then node bin/coevolve.js run --resume "$dir"
    else rm -rf "$dir" && node bin/coevolve.js run "configs/runs/flow/$credit.yaml" --out "$dir" --set "seed=$seed"; fi
  done
done
