/**
 * PPO-family losses on `tf.Tensor2D` inputs of shape [B, T] with a float 0/1
 * mask of the same shape. Semantics follow verl `core_algos.py` (stored
 * commit 012be9d; the global-batch arguments of {@link aggLoss} follow verl
 * b178a3c) and, for {@link trlAggLoss}, TRL `GRPOTrainer._compute_loss`.
 *
 * Micro-batching: pass {@link GlobalBatch} normalisers counted over the whole
 * batch and the micro-batch losses sum to the one-shot loss. TRL's
 * gradient-accumulation and `num_processes` scaling are not modelled.
 *
 * Every tensor function disposes its intermediates and returns tensors the
 * caller owns; the scalar losses stay differentiable. Masked positions must
 * hold finite numbers (as in verl, the mask multiplies, and NaN·0 = NaN).
 */
import * as tf from '@tensorflow/tfjs';

/** verl `loss_agg_mode` values. */
export type AggMode = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';

/** TRL `GRPOConfig.loss_type` values handled here. */
export type TrlLossType = 'grpo' | 'bnpo' | 'dr_grpo' | 'dapo';

/** `Σ(x·m) / (Σm + 1e-8)` over all entries, verl `verl_F.masked_mean`. */
export function maskedMeanTensor(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.tidy(() => tf.div(tf.sum(tf.mul(x, mask)), tf.add(tf.sum(mask), 1e-8)));
}

/** Number of rows with at least one masked-in token, at least 1 (see {@link aggLoss}). */
function nonEmptyRows(mask: tf.Tensor2D): tf.Scalar {
  return tf.maximum(tf.sum(tf.cast(tf.greater(tf.sum(mask, 1), 0), 'float32')), 1);
}

/**
 * verl `agg_loss`'s global-batch arguments (verl b178a3c,
 * `verl/trainer/ppo/core_algos.py`), counted over the whole (global) batch so
 * that the losses of its micro-batches sum to the loss of the whole batch.
 */
export interface GlobalBatch {
  /** `dp_size`: data-parallel ranks whose gradients get averaged; default 1 */
  dpSize?: number;
  /** `batch_num_tokens`: masked-in tokens of the global batch (token-mean) */
  batchNumTokens?: number;
  /** `global_batch_size`: sequences of the global batch (the seq-mean modes) */
  globalBatchSize?: number;
  /** `loss_scale_factor`: divisor of seq-mean-token-sum-norm; default the mask width */
  lossScaleFactor?: number;
}

/**
 * Aggregate a [B, T] loss matrix to a scalar, as verl `agg_loss`. With
 * `s_i = Σ_t L·M` and `D = dpSize` (default 1):
 * - `'token-mean'`: `Σ(L·M) / batchNumTokens · D`; default `ΣM + 1e-8`
 *   (all masked tokens weigh equally; 0 for an all-masked batch).
 * - `'seq-mean-token-sum'`: `Σ_i s_i / globalBatchSize · D`; default the
 *   number of rows that have at least one token.
 * - `'seq-mean-token-mean'`: `Σ_i (s_i / (Σ_t M + 1e-8)) / globalBatchSize · D`,
 *   same default.
 * - `'seq-mean-token-sum-norm'` (Dr.GRPO): `Σ_i s_i / lossScaleFactor`,
 *   default T = mask width. Not divided by B, and verl does not multiply this
 *   mode by `dp_size` either (so neither do we). An intermediate verl release
 *   also divided by the row count.
 * In the seq-mean modes, rows without tokens contribute 0 to the sum (verl's
 * `masked_sum(seq_losses, seq_mask)`).
 *
 * Defaults when an argument is absent: verl b178a3c uses the local `ΣM` and
 * the local non-empty row count with no guard, so an all-masked micro-batch
 * gives 0/0 = NaN; we keep `+1e-8` and `max(rows, 1)` so that it gives 0.
 * verl 012be9d averaged over all B rows with no per-row 1e-8 (a padded row made
 * `seq-mean-token-mean` NaN); batches without padded rows agree with both.
 */
export function aggLoss(lossMat: tf.Tensor2D, mask: tf.Tensor2D, mode: AggMode, global: GlobalBatch = {}): tf.Scalar {
  tf.util.assertShapesMatch(lossMat.shape, mask.shape, 'aggLoss: ');
  const dp = global.dpSize ?? 1;
  if (!(Number.isSafeInteger(dp) && dp > 0)) throw new Error(`aggLoss: dpSize must be a positive integer, got ${dp}`);
  for (const key of ['batchNumTokens', 'globalBatchSize', 'lossScaleFactor'] as const) {
    const v = global[key];
    if (v !== undefined && !(v > 0 && Number.isFinite(v)))
      throw new Error(`aggLoss: ${key} must be finite and > 0, got ${v}`);
  }
  return tf.tidy(() => {
    const rowSums = tf.sum(tf.mul(lossMat, mask), 1);
    const seqMean = (perRow: tf.Tensor) =>
      tf.mul(tf.div(tf.sum(perRow), global.globalBatchSize ?? nonEmptyRows(mask)), dp);
    switch (mode) {
      case 'token-mean':
        if (global.batchNumTokens === undefined) return tf.mul(maskedMeanTensor(lossMat, mask), dp);
        return tf.mul(tf.div(tf.sum(tf.mul(lossMat, mask)), global.batchNumTokens), dp); // summed as maskedMeanTensor sums
      case 'seq-mean-token-sum':
        return seqMean(rowSums);
      case 'seq-mean-token-mean':
        return seqMean(tf.div(rowSums, tf.add(tf.sum(mask, 1), 1e-8)));
      case 'seq-mean-token-sum-norm':
        return tf.div(tf.sum(rowSums), global.lossScaleFactor ?? mask.shape[1]);
      default:
        throw new Error(`Invalid loss_agg_mode: ${String(mode)}`);
    }
  }) as tf.Scalar;
}

/**
 * Aggregate like TRL GRPO's `loss_type` (single process, no accumulation):
 * - `'grpo'`: mean over ALL B rows of `Σ_t L·M / max(Σ_t M, 1)` (padded rows
 *   count as 0 and dilute the mean — TRL's behaviour, unlike {@link aggLoss}).
 * - `'bnpo'`: `Σ L·M / max(Σ M, 1)` (= verl token-mean).
 * - `'dr_grpo'`: `Σ L·M / (B · maxCompletionLength)`; default length = T.
 * - `'dapo'`: `Σ L·M / numItemsInBatch`, TRL's count of completion tokens in
 *   the whole generation batch; default `max(Σ M, 1)` (the 1 is ours; TRL
 *   does not guard the all-empty case).
 */
export function trlAggLoss(
  lossMat: tf.Tensor2D,
  mask: tf.Tensor2D,
  lossType: TrlLossType,
  maxCompletionLength?: number,
  numItemsInBatch?: number,
): tf.Scalar {
  tf.util.assertShapesMatch(lossMat.shape, mask.shape, 'trlAggLoss: ');
  return tf.tidy(() => {
    const total = tf.sum(tf.mul(lossMat, mask));
    const tokens = tf.maximum(tf.sum(mask), 1);
    switch (lossType) {
      case 'grpo':
        return tf.mean(tf.div(tf.sum(tf.mul(lossMat, mask), 1), tf.maximum(tf.sum(mask, 1), 1)));
      case 'bnpo':
        return tf.div(total, tokens);
      case 'dr_grpo':
        return tf.div(total, mask.shape[0] * (maxCompletionLength ?? mask.shape[1]));
      case 'dapo':
        return numItemsInBatch === undefined ? tf.div(total, tokens) : tf.div(total, numItemsInBatch);
      default:
        throw new Error(`Unknown loss type: ${String(lossType)}`);
    }
  }) as tf.Scalar;
}

/** Inputs of {@link policyLoss}; all tensors [B, T]. */
export interface PolicyLossInput {
  oldLogProb: tf.Tensor2D;
  logProb: tf.Tensor2D;
  advantages: tf.Tensor2D;
  mask: tf.Tensor2D;
  /** ε_low: ratio lower bound is `1 − clipLow`. */
  clipLow: number;
  /** ε_high: ratio upper bound is `1 + clipHigh`. Default `clipLow`. */
  clipHigh?: number;
  /** Dual-clip bound for negative advantages; must be > 1. Default 3. */
  clipRatioC?: number;
  /** Default `'token-mean'`. */
  aggMode?: AggMode;
  /** Whole-batch normalisers when this is a micro-batch (see {@link aggLoss}). */
  global?: GlobalBatch;
  /** verl's `rollout_is_weights` [B, T] (no gradient): each token's clipped loss is multiplied by its weight before aggregation (see rollout-is.ts) */
  rolloutIsWeights?: tf.Tensor2D;
}

/** Result of {@link policyLoss}. Statistics are plain numbers (read with dataSync) so nothing extra needs disposing. */
export interface PolicyLossResult {
  /** Scalar loss; carries gradients to `logProb`. Caller disposes. */
  loss: tf.Scalar;
  /** Masked fraction of tokens where the ε-clip was active (`pg_clipfrac`). */
  clipfrac: number;
  /** Masked mean of `old − new` log-prob, from the clamped log-ratio (`ppo_kl`). */
  ppoKl: number;
  /** Masked fraction of tokens where the dual clip bound (A < 0) was active (`pg_clipfrac_lower`). */
  clipfracLower: number;
}

/**
 * Clipped PPO policy loss with dual clip = verl `compute_policy_loss_vanilla`
 * (the deprecated `compute_policy_loss` is the same math):
 * `ρ = exp(clamp(logp − old, −20, 20))`; `L1 = −A·ρ`;
 * `L2 = −A·clamp(ρ, 1 − clipLow, 1 + clipHigh)`; `C1 = max(L1, L2)`;
 * for A < 0 only: `min(−A·c, C1)` (dual clip, c = clipRatioC); times verl's
 * `rollout_is_weights` when given; aggregated with {@link aggLoss}. `clipfrac = masked mean of [L2 > L1]`,
 * `clipfracLower = masked mean of [C1 > −A·c and A < 0]`,
 * `ppoKl = masked mean of −clamped log-ratio`.
 * TRL's GRPO loss differs: `−min(ρ·A, clip(ρ)·A)` without the ±20 clamp or the
 * dual clip (it only offers an optional upper cap `delta` on ρ).
 */
export function policyLoss(input: PolicyLossInput): PolicyLossResult {
  const { oldLogProb, logProb, advantages: adv, mask, clipLow } = input;
  const clipHigh = input.clipHigh ?? clipLow;
  const c = input.clipRatioC ?? 3.0;
  if (!(c > 1)) throw new Error(`clipRatioC must be > 1 for dual-clip PPO, got ${c}`);
  for (const t of [oldLogProb, adv, mask]) tf.util.assertShapesMatch(logProb.shape, t.shape, 'policyLoss: ');
  return tf.tidy(() => {
    const logRatio = tf.clipByValue(tf.sub(logProb, oldLogProb), -20, 20);
    const ratio = tf.exp(logRatio);
    const negAdv = tf.neg(adv);
    const l1 = tf.mul(negAdv, ratio);
    const l2 = tf.mul(negAdv, tf.clipByValue(ratio, 1 - clipLow, 1 + clipHigh));
    const clipped1 = tf.maximum(l1, l2);
    const l3 = tf.mul(negAdv, c);
    const isNeg = tf.less(adv, 0);
    const clippedLoss = tf.where(isNeg, tf.minimum(l3, clipped1), clipped1) as tf.Tensor2D;
    const perToken = input.rolloutIsWeights
      ? (tf.mul(clippedLoss, input.rolloutIsWeights) as tf.Tensor2D)
      : clippedLoss;
    const loss = aggLoss(perToken, mask, input.aggMode ?? 'token-mean', input.global);
    const stat = (x: tf.Tensor) => maskedMeanTensor(x, mask).dataSync()[0];
    const clipfrac = stat(tf.cast(tf.greater(l2, l1), 'float32'));
    const lower = stat(tf.cast(tf.logicalAnd(tf.greater(clipped1, l3), isNeg), 'float32'));
    const ppoKl = stat(tf.neg(logRatio));
    return { loss, clipfrac, ppoKl, clipfracLower: lower };
  });
}

/** Inputs of {@link valueLoss}; all tensors [B, T]. */
export interface ValueLossInput {
  vpreds: tf.Tensor2D;
  returns: tf.Tensor2D;
  /** Value predictions at rollout time (the clip centre). */
  values: tf.Tensor2D;
  mask: tf.Tensor2D;
  clipRangeValue: number;
  aggMode?: AggMode;
  global?: GlobalBatch;
}

/**
 * Clipped value loss = verl `compute_value_loss`:
 * `v̂ = clamp(vpreds, values − c, values + c)`,
 * `loss = 0.5 · agg(max((vpreds − R)², (v̂ − R)²))`,
 * `clipfrac = masked mean of [(v̂ − R)² > (vpreds − R)²]` (a number).
 */
export function valueLoss(input: ValueLossInput): { loss: tf.Scalar; clipfrac: number } {
  const { vpreds, returns, values, mask, clipRangeValue: c } = input;
  for (const t of [returns, values, mask]) tf.util.assertShapesMatch(vpreds.shape, t.shape, 'valueLoss: ');
  return tf.tidy(() => {
    const vClipped = tf.maximum(tf.minimum(vpreds, tf.add(values, c)), tf.sub(values, c));
    const l1 = tf.square(tf.sub(vpreds, returns));
    const l2 = tf.square(tf.sub(vClipped, returns));
    const worst = tf.maximum(l1, l2) as tf.Tensor2D;
    const loss = tf.mul(aggLoss(worst, mask, input.aggMode ?? 'token-mean', input.global), 0.5) as tf.Scalar;
    const clipfrac = maskedMeanTensor(tf.cast(tf.greater(l2, l1), 'float32'), mask).dataSync()[0];
    return { loss, clipfrac };
  });
}

/**
 * Entropy term = verl `compute_entropy_loss` given per-token entropies:
 * `aggLoss(entropy, mask, mode)`. The trainer subtracts `coef ×` this.
 */
export function entropyBonus(
  entropy: tf.Tensor2D,
  mask: tf.Tensor2D,
  aggMode: AggMode = 'token-mean',
  global?: GlobalBatch,
): tf.Scalar {
  return aggLoss(entropy, mask, aggMode, global);
}
