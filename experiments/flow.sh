#!/bin/bash
# The flow study (docs/flow.md), resumable: run it again after a kill and each run goes on from
# its last checkpoint. The planner base first (pretrain resumes an unfinished run of its config),
# then seeds 1..3 of the broadcast run and of its final-turn-only ablation at the same budget,
# the six side by side; given `broadcast` or `final`, only that one's seeds. The untrained planner
# is iteration 0 of every run's held-out evaluations.
# From the repository root:
#   setsid nohup bash experiments/flow.sh > runs/flow.log 2>&1 &
set -euo pipefail
credits=("${1:-broadcast}" "${1:-final}")
[ -f checkpoints/base-flow-ref/model.json ] || node bin/coevolve.js pretrain configs/pretrain/base-flow-ref.yaml
mkdir -p runs/flow
for seed in 1 2 3; do
  for credit in $(printf '%s\n' "${credits[@]}" | uniq); do
    dir="runs/flow/$credit-s$seed"
    if grep -qs '"status": "done"' "$dir/run.json"; then continue; fi
    if grep -qs lastCheckpoint "$dir/run.json"; then node bin/coevolve.js run --resume "$dir" > "$dir.log" 2>&1 &
    else rm -rf "$dir" && node bin/coevolve.js run "configs/runs/flow/$credit.yaml" --out "$dir" --set "seed=$seed" > "$dir.log" 2>&1 & fi
  done
done
wait
