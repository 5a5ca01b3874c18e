/**
 * Combining judges: several reward sources scored the same group; the trainer needs one
 * reward per turn.
 */
import type { BatchRewards, Reward } from '../src/core/types.js';

/**
 * The null-aware weighted sum of several judges' rewards for one group, as TRL's
 * GRPOTrainer combines its reward functions: each turn gets
 * `r = Σ_j weights[j] · perJudge[j][e][t]` over the judges whose reward there is not null.
 * TRL maps an abstaining reward function's `None` to NaN and takes `nansum` of the weighted
 * rewards, and so does this: there is NO renormalisation by the weights of the judges
 * present (a turn scored only by a judge of weight 0.5 gets half that judge's reward).
 * If every judge abstains on a turn the result is `null` (TRL would give 0 there; keeping
 * null lets the trainer drop the turn instead of treating it as a real 0).
 *
 * Throws when `perJudge` is empty, when `weights.length !== perJudge.length`, when a weight
 * is not finite, when the judges' shapes differ (number of episodes, or of turns in an
 * episode), or when a reward is neither null nor a finite number (null, not NaN, is the
 * abstain marker). Inputs are not mutated.
 */
export function combineRewards(perJudge: readonly BatchRewards[], weights: readonly number[]): BatchRewards {
  if (perJudge.length === 0) throw new Error('combineRewards: no judges to combine');
  if (weights.length !== perJudge.length) {
    throw new Error(`combineRewards: ${weights.length} weights for ${perJudge.length} judges`);
  }
  weights.forEach((w, j) => {
    if (typeof w !== 'number' || !Number.isFinite(w)) throw new Error(`combineRewards: weight ${j} is ${String(w)}`);
  });
  const shape = perJudge[0];
  perJudge.forEach((rewards, j) => {
    if (rewards.length !== shape.length) {
      throw new Error(`combineRewards: judge ${j} has ${rewards.length} episodes, judge 0 has ${shape.length}`);
    }
    rewards.forEach((row, e) => {
      if (row.length !== shape[e].length) {
        throw new Error(`combineRewards: judge ${j} has ${row.length} turns in episode ${e}, judge 0 has ${shape[e].length}`);
      }
    });
  });
  return shape.map((row, e) =>
    row.map((_, t) => {
      let sum: Reward = null;
      for (let j = 0; j < perJudge.length; j++) {
        const r = perJudge[j][e][t];
        if (r === null) continue;
        if (typeof r !== 'number' || !Number.isFinite(r)) {
          throw new Error(`combineRewards: judge ${j} gave ${String(r)} at episode ${e} turn ${t}; use null to abstain`);
        }
        sum = (sum ?? 0) + weights[j] * r;
      }
      return sum;
    }),
  );
}
