/**
 * Combining judges: several reward sources scored the same group; the trainer needs one
 * reward per turn.
 */
import type { BatchRewards, Reward } from './types.js';

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
        throw new Error(
          `combineRewards: judge ${j} has ${row.length} turns in episode ${e}, judge 0 has ${shape[e].length}`,
        );
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
          throw new Error(
            `combineRewards: judge ${j} gave ${String(r)} at episode ${e} turn ${t}; use null to abstain`,
          );
        }
        sum = (sum ?? 0) + weights[j] * r;
      }
      return sum;
    }),
  );
}

/** TRL's epsilon in both of normalize_then_sum's divisions. */
const EPS = 1e-4;

/** Mean and Bessel-corrected std of the finite values (TRL's nanmean and nanstd): std NaN with fewer than two. */
function nanStats(xs: readonly number[]): { mean: number; std: number } {
  const v = xs.filter((x) => !Number.isNaN(x));
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  const std = v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (v.length - 1)) : NaN;
  return { mean, std };
}

/**
 * Several judges' rewards turned into one advantage per turn by TRL's GRPOTrainer with
 * `multi_objective_aggregation="normalize_then_sum"` (GDPO's decoupled normalisation), so
 * that a judge with large or wide rewards does not drown the others:
 * 1. each judge's reward is normalised within its comparison group,
 *    (r - mean_g) / (std_g + 1e-4), the mean and Bessel-corrected std taken over the group's
 *    turns where that judge did not abstain (TRL's nanmean, nanstd); a group with one such
 *    turn has std NaN, so its normalised reward is NaN, as in TRL;
 * 2. the normalised rewards are summed with the judges' weights, skipping abstentions and
 *    NaNs (TRL's nansum: a turn whose every part is NaN sums to 0);
 * 3. the sums are normalised over the whole batch: (s - mean) / (std + 1e-4), std
 *    Bessel-corrected, and 0 for a batch of one (TRL's zeros when numel is 1).
 * As in TRL the result is the advantage itself (`scale_rewards` plays no part). `rewards[i]`
 * holds turn i's reward from each judge (null: abstained); a turn every judge abstained on is
 * the caller's to drop (TRL forces its advantage to 0), and is refused here.
 */
export function normalizeThenSum(
  rewards: readonly (readonly Reward[])[],
  groups: readonly string[],
  weights: readonly number[],
): number[] {
  if (rewards.length !== groups.length)
    throw new Error(`normalizeThenSum: ${rewards.length} turns but ${groups.length} group ids`);
  rewards.forEach((row, i) => {
    if (row.length !== weights.length)
      throw new Error(`normalizeThenSum: turn ${i} has ${row.length} rewards for ${weights.length} judges`);
    if (row.every((r) => r === null))
      throw new Error(`normalizeThenSum: every judge abstained on turn ${i}; drop it first`);
    row.forEach((r, k) => {
      if (r !== null && !Number.isFinite(r))
        throw new Error(`normalizeThenSum: judge ${k} gave ${String(r)} at turn ${i}; use null to abstain`);
    });
  });
  const members = new Map<string, number[]>();
  groups.forEach((g, i) => members.set(g, [...(members.get(g) ?? []), i]));
  const sums = new Array<number>(rewards.length).fill(0);
  for (let k = 0; k < weights.length; k++) {
    for (const idx of members.values()) {
      const { mean, std } = nanStats(idx.map((i) => rewards[i][k] ?? NaN));
      for (const i of idx) {
        const r = rewards[i][k];
        const z = r === null ? NaN : (r - mean) / (std + EPS);
        if (!Number.isNaN(z)) sums[i] += weights[k] * z;
      }
    }
  }
  if (sums.length < 2) return sums.map(() => 0);
  const { mean, std } = nanStats(sums);
  return sums.map((s) => (s - mean) / (std + EPS));
}
