/**
 * Advantage estimators on plain arrays (no tensors: they run once per batch,
 * outside the gradient tape). Per-sequence inputs are `number[]`, per-token
 * inputs are `number[][]` (batch × tokens), masks are 0/1 and group ids are
 * `(string | number)[]` (compared with `Map` semantics, so `1` and `'1'` are
 * different groups).
 *
 * The verl estimators follow `verl/trainer/ppo/core_algos.py` as stored for
 * volcengine/verl at commit 012be9d. Like verl they all return
 * `{ advantages, returns }`; for the outcome estimators the two are the same
 * matrix (verl returns `scores, scores`).
 */
import { assertSameShape, maskedWhiten, type Matrix } from './whiten.js';

/** A group identifier, e.g. a prompt uid or a game seed. */
export type GroupId = string | number;

/** Per-token advantages and returns, both shaped like the response mask. */
export interface AdvantageResult {
  advantages: Matrix;
  returns: Matrix;
}

/** Indices of each group, in first-seen order (verl iterates a dict the same way). */
function groupIndices(groupIds: readonly GroupId[]): Map<GroupId, number[]> {
  const groups = new Map<GroupId, number[]>();
  groupIds.forEach((id, i) => {
    const members = groups.get(id);
    if (members) members.push(i);
    else groups.set(id, [i]);
  });
  return groups;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Sample standard deviation, as `torch.std` (Bessel-corrected, n − 1). */
function unbiasedStd(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((acc, x) => acc + (x - m) ** 2, 0) / (xs.length - 1));
}

/**
 * Broadcast one scalar per sequence over that sequence's tokens, times the
 * mask: `out[i][t] = perSequence[i] · mask[i][t]` (verl's
 * `scores.unsqueeze(-1) * response_mask`; TRL does the same inside its loss
 * with `advantages.unsqueeze(1)`).
 */
export function broadcastOverTokens(perSequence: readonly number[], mask: Matrix): Matrix {
  if (perSequence.length !== mask.length) {
    throw new Error(`broadcastOverTokens: ${perSequence.length} values for ${mask.length} rows`);
  }
  return mask.map((row, i) => row.map((m) => perSequence[i] * m));
}

/** Shared front half of the outcome estimators: row scores and their groups. */
function outcomeScores(tokenRewards: Matrix, mask: Matrix, groupIds: readonly GroupId[]) {
  assertSameShape(tokenRewards, mask, 'tokenRewards/mask');
  if (groupIds.length !== tokenRewards.length) {
    throw new Error(`${groupIds.length} group ids for ${tokenRewards.length} rows`);
  }
  // verl sums every token reward of the row, masked or not (`.sum(dim=-1)`).
  const scores = tokenRewards.map((row) => row.reduce((a, b) => a + b, 0));
  return { scores, groups: groupIndices(groupIds) };
}

/** Both fields point at the same matrix, exactly as verl's `return scores, scores`. */
const same = (m: Matrix): AdvantageResult => ({ advantages: m, returns: m });

/** Options for {@link grpoOutcomeAdvantage}. */
export interface GrpoOptions {
  /** Added to the std before dividing. Default 1e-6 (verl's `epsilon`). */
  epsilon?: number;
  /** Divide by the group std (GRPO, default) or not (Dr.GRPO). verl `norm_adv_by_std_in_grpo`. */
  normAdvByStd?: boolean;
  /**
   * The sample each row belongs to, when several rows share one outcome (the planner turns of
   * one trajectory, each paid the trajectory's outcome): a group's mean and std are taken over
   * its samples, each counted once, and each row gets its sample's advantage. Default: every
   * row is its own sample (verl).
   */
  units?: readonly GroupId[];
}

/**
 * GRPO outcome advantage = verl `compute_grpo_outcome_advantage`.
 *
 * `score_i = Σ_t tokenRewards[i][t]` (mask ignored, as verl). Per group:
 * `mean`, and `std` = `torch.std` (unbiased). A group of one gets `mean = 0`,
 * `std = 1`, so its advantage is `score / (1 + ε)` — it is NOT zeroed.
 * A group of equal scores has `std = 0` and advantage `0 / ε = 0`.
 * `A_i = (score_i − mean) / (std + ε)` when `normAdvByStd` (default), else
 * `score_i − mean` (Dr.GRPO). The scalar is broadcast over tokens × mask.
 * With `units`, mean and std are over the group's units, one score each, and every row gets
 * its unit's advantage: Flow-GRPO's `A_i = (R(τ_i) − mean_k R(τ_k)) / std_k R(τ_k)` over the
 * G trajectories of one query, given to each turn of τ_i (a verl batch with one row per turn
 * would count a trajectory once per turn instead).
 */
export function grpoOutcomeAdvantage(
  tokenRewards: Matrix,
  mask: Matrix,
  groupIds: readonly GroupId[],
  { epsilon = 1e-6, normAdvByStd = true, units }: GrpoOptions = {},
): AdvantageResult {
  const { scores, groups } = outcomeScores(tokenRewards, mask, groupIds);
  if (units && units.length !== scores.length) throw new Error(`${units.length} units for ${scores.length} rows`);
  const adv = new Array<number>(scores.length);
  for (const members of groups.values()) {
    const xs = units ? unitScores(members, scores, units) : members.map((i) => scores[i]);
    const single = xs.length === 1;
    const m = single ? 0 : mean(xs);
    const s = single ? 1 : unbiasedStd(xs);
    for (const i of members) adv[i] = normAdvByStd ? (scores[i] - m) / (s + epsilon) : scores[i] - m;
  }
  return same(broadcastOverTokens(adv, mask));
}

/** One score per sample of a group (first-seen order); the rows of one sample must share their score. */
function unitScores(members: readonly number[], scores: readonly number[], units: readonly GroupId[]): number[] {
  const byUnit = new Map<GroupId, number>();
  for (const i of members) {
    const had = byUnit.get(units[i]);
    if (had === undefined) byUnit.set(units[i], scores[i]);
    else if (had !== scores[i])
      throw new Error(`unit ${String(units[i])}: its rows score ${had} and ${scores[i]}; one outcome per unit`);
  }
  return [...byUnit.values()];
}

/** TRL `GRPOConfig.scale_rewards`; `true` means `'group'` and `false` means `'none'`, as TRL maps them. */
export type TrlScaleRewards = 'group' | 'batch' | 'none' | boolean;

/**
 * TRL GRPO advantage = the advantage block of TRL `GRPOTrainer._generate_and_score_completions`
 * (trl/trainer/grpo_trainer.py). Returns one advantage per sequence; broadcast
 * with {@link broadcastOverTokens} (TRL broadcasts inside the loss).
 *
 * `A_i = r_i − mean(group)`, then unless `'none'`: `A_i /= (std + 1e-4)` where
 * std is `torch.std` (unbiased) of the group (`'group'`, TRL's default) or of
 * the whole batch (`'batch'`; mean is still per group). Differences from verl:
 * ε is 1e-4 (verl 1e-6), rewards are per sequence (verl sums token rewards).
 *
 * Group of one: TRL's config refuses `num_generations < 2` for training; for
 * evaluation with one generation current TRL sets std = 0, so the advantage is
 * `0 / 1e-4 = 0` (older TRL took `std()` of one element, i.e. NaN). We follow
 * current TRL: 0. Likewise `'batch'` with a single reward uses std = 0.
 * TRL groups by contiguous blocks of `num_generations`; grouping by id here is
 * the same when ids come in such blocks, and also allows unequal groups.
 */
export function trlGrpoAdvantage(
  rewards: readonly number[],
  groupIds: readonly GroupId[],
  scaleRewards: TrlScaleRewards = 'group',
): number[] {
  if (rewards.length !== groupIds.length) throw new Error('trlGrpoAdvantage: length mismatch');
  const scale = scaleRewards === true ? 'group' : scaleRewards === false ? 'none' : scaleRewards;
  if (!['group', 'batch', 'none'].includes(scale)) throw new Error(`Invalid scale_rewards: ${String(scale)}`);
  const batchStd = rewards.length > 1 ? unbiasedStd(rewards) : 0;
  const adv = new Array<number>(rewards.length);
  for (const members of groupIndices(groupIds).values()) {
    const xs = members.map((i) => rewards[i]);
    const m = mean(xs);
    const std = scale === 'batch' ? batchStd : xs.length > 1 ? unbiasedStd(xs) : 0;
    for (const i of members) adv[i] = scale === 'none' ? rewards[i] - m : (rewards[i] - m) / (std + 1e-4);
  }
  return adv;
}

/**
 * RLOO outcome advantage = verl `compute_rloo_outcome_advantage`.
 *
 * For a group of size n > 1: `A_i = score_i·n/(n−1) − mean·n/(n−1)`, i.e.
 * `score_i` minus the mean of the other n − 1 scores. A group of one keeps
 * its raw score (`A = score`, no baseline). Broadcast over tokens × mask.
 */
export function rlooOutcomeAdvantage(
  tokenRewards: Matrix,
  mask: Matrix,
  groupIds: readonly GroupId[],
): AdvantageResult {
  const { scores, groups } = outcomeScores(tokenRewards, mask, groupIds);
  const adv = [...scores];
  for (const members of groups.values()) {
    const n = members.length;
    if (n < 2) continue;
    const m = mean(members.map((i) => scores[i]));
    for (const i of members) adv[i] = (scores[i] * n) / (n - 1) - (m * n) / (n - 1);
  }
  return same(broadcastOverTokens(adv, mask));
}

/**
 * REINFORCE++-baseline = verl `compute_reinforce_plus_plus_baseline_outcome_advantage`.
 *
 * `score_i − mean(group)` (a group of one uses mean 0, so keeps its score),
 * tiled over tokens × mask, then {@link maskedWhiten} over all masked-in
 * tokens of the batch (so longer responses weigh more in the statistics),
 * then × mask again. Throws if fewer than two tokens are masked in.
 */
export function reinforcePlusPlusBaselineAdvantage(
  tokenRewards: Matrix,
  mask: Matrix,
  groupIds: readonly GroupId[],
): AdvantageResult {
  const { scores, groups } = outcomeScores(tokenRewards, mask, groupIds);
  const centred = [...scores];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const m = mean(members.map((i) => scores[i]));
    for (const i of members) centred[i] = scores[i] - m;
  }
  const tiled = broadcastOverTokens(centred, mask);
  const whitened = maskedWhiten(tiled, mask);
  return same(whitened.map((row, i) => row.map((v, t) => v * mask[i][t])));
}

/**
 * REINFORCE++ = verl `compute_reinforce_plus_plus_outcome_advantage`.
 *
 * Discounted returns, scanned right to left per row:
 * `running = r_t + γ·running; returns[t] = running; running *= mask[t]`.
 * The reset comes after storing, so a masked (post-EOS) position still gets
 * its own return but nothing flows from it into earlier, valid tokens.
 * Advantages = {@link maskedWhiten}(returns, mask) × mask; `returns` are
 * returned unmasked, as verl does. Throws if fewer than two tokens are masked in.
 */
export function reinforcePlusPlusAdvantage(tokenRewards: Matrix, mask: Matrix, gamma: number): AdvantageResult {
  assertSameShape(tokenRewards, mask, 'tokenRewards/mask');
  const returns = tokenRewards.map((row, i) => {
    const out = new Array<number>(row.length);
    let running = 0;
    for (let t = row.length - 1; t >= 0; t--) {
      running = row[t] + gamma * running;
      out[t] = running;
      running *= mask[i][t];
    }
    return out;
  });
  const whitened = maskedWhiten(returns, mask);
  return { advantages: whitened.map((row, i) => row.map((v, t) => v * mask[i][t])), returns };
}

/**
 * GAE = verl `compute_gae_advantage_return`, in the version that skips masked
 * tokens inside the loop (present in the stored 012be9d source; older verl,
 * e.g. 26b5d6b, read `values[t+1]` and ignored the mask until whitening).
 *
 * Per row, right to left, starting from `next = 0`, `gae = 0`:
 * `δ = r_t + γ·next − V_t`, `g = δ + γλ·gae`, then only where `mask[t] = 1`
 * update `next = V_t` and `gae = g` (masked tokens carry both through
 * unchanged, so padding and observation tokens are skipped).
 * `advantages[t] = gae` after that step, `returns = advantages + values`,
 * then advantages are {@link maskedWhiten}ed over the masked-in tokens.
 * As in verl the whitened advantages are NOT multiplied by the mask, so padded
 * positions hold non-zero values; the loss must mask them out.
 */
export function gaeAdvantageReturn(
  tokenRewards: Matrix,
  values: Matrix,
  mask: Matrix,
  gamma: number,
  lam: number,
): AdvantageResult {
  assertSameShape(tokenRewards, mask, 'tokenRewards/mask');
  assertSameShape(values, mask, 'values/mask');
  const raw = tokenRewards.map((row, i) => {
    const out = new Array<number>(row.length);
    let next = 0;
    let gae = 0;
    for (let t = row.length - 1; t >= 0; t--) {
      const m = mask[i][t];
      const v = values[i][t];
      const g = row[t] + gamma * next - v + gamma * lam * gae;
      next = v * m + (1 - m) * next;
      gae = g * m + (1 - m) * gae;
      out[t] = gae;
    }
    return out;
  });
  const returns = raw.map((row, i) => row.map((a, t) => a + values[i][t]));
  return { advantages: maskedWhiten(raw, mask), returns };
}
