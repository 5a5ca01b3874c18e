// A custom judge: partial credit for a near miss (TRL's reward function, per turn).
// Use it in a config with `plugins: [./examples/custom-judge/closeness.ts]` and
// `judges: [{ kind: closeness }]`.
import { defineJudge } from 'coevolve';

export const closeness = defineJudge('closeness', {
  reward(turn, episode) {
    if (!turn.action.valid) return 0;
    const truth = Number((turn.task ?? episode.task).answer);
    return Math.exp(-Math.abs(Number(turn.action.value) - truth));
  },
});
