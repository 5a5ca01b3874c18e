import { klPenaltyArray, type KlKind } from './kl.js';

/** How a role's KL-in-reward coefficient moves: verl's `algorithm.kl_ctrl`. */
export interface KlControlSpec {
  /** 'fixed' keeps `coef`; 'adaptive' steers it toward `targetKl` */
  type: 'fixed' | 'adaptive';
  /** the starting coefficient β (verl's `kl_coef`) */
  coef: number;
  /** the KL the adaptive controller aims at (verl's `target_kl`) */
  targetKl?: number;
  /** samples over which a full proportional correction is applied (verl's `horizon`) */
  horizon?: number;
}

/**
 * verl's `FixedKLController` and `AdaptiveKLController` (core_algos.py). The adaptive one,
 * after each batch of `nSteps` samples with mean KL `currentKl`:
 * `error = clip(currentKl / targetKl - 1, -0.2, 0.2)`, `value *= 1 + error · nSteps / horizon`.
 * The fixed one never moves. `value` is plain JSON, so a checkpoint keeps it.
 */
export class KlController {
  value: number;
  constructor(
    readonly spec: KlControlSpec,
    value?: number,
  ) {
    if (!(spec.coef >= 0) || !Number.isFinite(spec.coef))
      throw new Error(`klReward.coef must be finite and >= 0, got ${spec.coef}`);
    if (spec.type === 'adaptive' && !(Number(spec.targetKl) > 0 && Number(spec.horizon) > 0)) {
      throw new Error('klReward: an adaptive controller needs targetKl > 0 and horizon > 0');
    }
    this.value = value ?? spec.coef;
  }

  update(currentKl: number, nSteps: number): void {
    if (this.spec.type !== 'adaptive') return;
    const error = Math.min(0.2, Math.max(-0.2, currentKl / this.spec.targetKl! - 1));
    this.value *= 1 + (error * nSteps) / this.spec.horizon!;
  }
}

export interface KlRewardResult {
  /** token rewards with the penalty: `scores - β · kld` */
  rewards: number[][];
  /** the batch's mean per-sequence KL, masked (verl's `actor/reward_kl_penalty`) */
  currentKl: number;
  /** the β used (verl's `actor/reward_kl_penalty_coeff`), before the controller's update */
  beta: number;
}

/**
 * KL as a reward penalty = verl `apply_kl_penalty`: `kld = kl_penalty(old_log_prob,
 * ref_log_prob) · mask`, `token_rewards = token_scores - β · kld` with β the controller's
 * current value; `current_kl` = the mean over the batch of each row's masked mean of kld;
 * then `kl_ctrl.update(current_kl, n_steps = batch size)`. Rows are token-aligned with `mask`.
 */
export function applyKlPenalty(
  scores: number[][],
  oldLogProbs: number[][],
  refLogProbs: number[][],
  mask: number[][],
  kind: KlKind,
  ctrl: KlController,
): KlRewardResult {
  const kld = klPenaltyArray(oldLogProbs, refLogProbs, kind).map((row, i) => row.map((v, t) => v * mask[i][t]));
  const beta = ctrl.value;
  const rewards = scores.map((row, i) => row.map((r, t) => r - beta * kld[i][t]));
  const perRow = kld.map((row, i) => {
    const n = mask[i].reduce((a, b) => a + b, 0);
    return row.reduce((a, b) => a + b, 0) / (n + 1e-8); // verl's masked_mean
  });
  const currentKl = perRow.reduce((a, b) => a + b, 0) / Math.max(perRow.length, 1);
  ctrl.update(currentKl, scores.length);
  return { rewards, currentKl, beta };
}
