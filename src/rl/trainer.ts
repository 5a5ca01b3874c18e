import * as tf from '@tensorflow/tfjs';
import type { Policy, PolicyInput } from '../models/types.js';
import { padRows } from '../models/types.js';
import { broadcastOverTokens } from './advantages.js';
import { groupBy } from '../util/group.js';
import { applyClipped } from './apply.js';
import { klPenalty, type KlKind } from './kl.js';
import { aggLoss, entropyBonus, maskedMeanTensor, policyLoss, valueLoss, type AggMode } from './loss.js';

/** One completion to learn from, plain JSON. */
export interface TrainSample extends PolicyInput {
  /** id of the model that produced it (a key of the trainer's models) */
  model: string;
  /** the role it was played in; a shared model sums the losses of its roles */
  role: string;
  /** log-probs of the completion tokens when sampled */
  oldLogProbs: readonly number[];
  /** one advantage per completion token, or one for the whole completion */
  advantages: readonly number[] | number;
  /** reference-model log-probs, for the KL loss term */
  refLogProbs?: readonly number[];
  /** this role's weight of the KL loss term, when it differs from the trainer's klCoef */
  klCoef?: number;
  /** this role's weight in the sum of the roles' losses on a shared model (default 1) */
  lossWeight?: number;
  /** value targets and rollout-time values (the clip centre), for the value loss: both or neither */
  returns?: readonly number[];
  oldValues?: readonly number[];
}

export interface TrainerConfig {
  /** Adam learning rate */
  lr: number;
  /** Adam betas and epsilon (PyTorch's defaults) */
  beta1: number;
  beta2: number;
  epsilon: number;
  /** PPO clip: ratio kept within [1 - clipLow, 1 + clipHigh] */
  clipLow: number;
  clipHigh: number;
  /** dual-clip bound for negative advantages (> 1) */
  clipRatioC: number;
  /** how token losses become one number per role (verl's loss_agg_mode) */
  aggMode: AggMode;
  /** weight of the entropy bonus (subtracted) */
  entropyCoef: number;
  /** weight of the KL-to-reference loss term; needs refLogProbs */
  klCoef: number;
  klKind: KlKind;
  /** weight and clip range of the value loss; needs returns and a value head */
  valueCoef: number;
  clipRangeValue: number;
  /** gradients are scaled so their global norm is at most this (as torch's clip_grad_norm_) */
  maxGradNorm: number;
  /** logits are divided by this before log-probs, as the sampler did */
  temperature: number;
}

export const DEFAULT_TRAINER: TrainerConfig = {
  lr: 1e-4, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, clipLow: 0.2, clipHigh: 0.2, clipRatioC: 3,
  aggMode: 'token-mean', entropyCoef: 0, klCoef: 0, klKind: 'k3', valueCoef: 0.5, clipRangeValue: 0.2,
  maxGradNorm: 1, temperature: 1,
};

export interface ModelStep {
  samples: number;
  tokens: number;
  /** the summed loss of every role on this model */
  loss: number;
  /** each role's share of `loss` */
  roleLoss: Record<string, number>;
  clipfrac: number;
  ppoKl: number;
  entropy: number;
  kl?: number;
  valueLoss?: number;
  /** global gradient norm before clipping */
  gradNorm: number;
  /** true when the loss or a gradient was not finite: no parameter moved */
  skipped: boolean;
  reason?: string;
}

/**
 * One joint update: samples are grouped by model; each model gets one optimizer step on
 * the sum of its roles' losses, over its own variables and no others.
 */
export class JointTrainer {
  readonly config: TrainerConfig;
  private readonly optimizers = new Map<string, tf.Optimizer>();

  constructor(readonly models: Readonly<Record<string, Policy>>, config: Partial<TrainerConfig> = {}) {
    this.config = { ...DEFAULT_TRAINER, ...config };
    const c = this.config;
    if (!(c.lr > 0)) throw new Error(`trainer: lr must be > 0, got ${c.lr}`);
    if (!(c.maxGradNorm > 0)) throw new Error(`trainer: maxGradNorm must be > 0, got ${c.maxGradNorm}`);
    for (const id of Object.keys(models)) this.optimizers.set(id, tf.train.adam(c.lr, c.beta1, c.beta2, c.epsilon));
  }

  step(samples: readonly TrainSample[]): Record<string, ModelStep> {
    samples.forEach((s, i) => checkSample(s, i, this.models));
    const report: Record<string, ModelStep> = {};
    for (const [id, batch] of groupBy(samples, (s) => s.model)) report[id] = this.updateModel(id, batch);
    return report;
  }

  private updateModel(id: string, batch: TrainSample[]): ModelStep {
    const model = this.models[id];
    const c = this.config;
    const stats = { clipfrac: 0, ppoKl: 0, entropy: 0, kl: undefined as number | undefined, valueLoss: undefined as number | undefined };
    const roleLoss: Record<string, number> = {};
    const { value, grads } = tf.variableGrads(() => {
      const scored = model.score(batch, c.temperature);
      const width = scored.mask.shape[1];
      const grid = (rows: (readonly number[])[]) => tf.tensor2d(padRows(rows, width), [batch.length, width]);
      const old = grid(batch.map((s) => s.oldLogProbs));
      const adv = grid(batch.map((s) => (typeof s.advantages === 'number' ? broadcastOverTokens([s.advantages], [s.completion.map(() => 1)])[0] : s.advantages)));
      const coefOf = (role: string) => batch.find((s) => s.role === role)?.klCoef ?? c.klCoef;
      const roles = [...new Set(batch.map((s) => s.role))];
      const kl = roles.some((r) => coefOf(r) !== 0) ? this.klMatrix(batch, scored.logProbs, grid) : undefined;
      const tokens = batch.reduce((n, s) => n + s.completion.length, 0);
      let total = tf.scalar(0);
      for (const role of roles) {
        const mask = scored.mask.mul(tf.tensor2d(batch.map((s) => (s.role === role ? 1 : 0)), [batch.length, 1])) as tf.Tensor2D;
        const pg = policyLoss({ oldLogProb: old, logProb: scored.logProbs, advantages: adv, mask, clipLow: c.clipLow, clipHigh: c.clipHigh, clipRatioC: c.clipRatioC, aggMode: c.aggMode });
        let loss: tf.Scalar = pg.loss;
        if (c.entropyCoef !== 0) loss = loss.sub(entropyBonus(scored.entropy, mask, c.aggMode).mul(c.entropyCoef));
        if (kl && coefOf(role) !== 0) loss = loss.add(aggLoss(kl, mask, c.aggMode).mul(coefOf(role)));
        if (c.valueCoef !== 0 && scored.values && batch.every((s) => s.returns && s.oldValues)) {
          const v = valueLoss({ vpreds: scored.values, returns: grid(batch.map((s) => s.returns!)), values: grid(batch.map((s) => s.oldValues!)), mask, clipRangeValue: c.clipRangeValue, aggMode: c.aggMode });
          stats.valueLoss = (stats.valueLoss ?? 0) + v.loss.dataSync()[0];
          loss = loss.add(v.loss.mul(c.valueCoef));
        }
        const weight = batch.find((s) => s.role === role)?.lossWeight ?? 1;
        if (weight !== 1) loss = loss.mul(weight);
        roleLoss[role] = loss.dataSync()[0];
        const share = batch.reduce((n, s) => n + (s.role === role ? s.completion.length : 0), 0) / Math.max(1, tokens);
        stats.clipfrac += pg.clipfrac * share; // token-weighted, so it equals one mean over all roles' tokens
        stats.ppoKl += pg.ppoKl * share;
        total = total.add(loss);
      }
      stats.entropy = maskedMeanTensor(scored.entropy, scored.mask).dataSync()[0];
      if (kl) stats.kl = maskedMeanTensor(kl, scored.mask).dataSync()[0];
      return total;
    }, model.variables());
    const loss = value.dataSync()[0];
    value.dispose();
    const base = { samples: batch.length, tokens: batch.reduce((n, s) => n + s.completion.length, 0), loss, roleLoss, ...stats };
    return { ...base, ...applyClipped(this.optimizers.get(id)!, grads, loss, c.maxGradNorm) };
  }

  /** Per-token KL to the reference model, zero in rows that carry no refLogProbs. */
  private klMatrix(batch: TrainSample[], logProbs: tf.Tensor2D, grid: (rows: (readonly number[])[]) => tf.Tensor2D): tf.Tensor2D {
    const ref = grid(batch.map((s) => s.refLogProbs ?? s.oldLogProbs));
    const has = tf.tensor2d(batch.map((s) => (s.refLogProbs ? 1 : 0)), [batch.length, 1]);
    return klPenalty(logProbs, ref, this.config.klKind).mul(has) as tf.Tensor2D;
  }

  /** Sets every model's Adam rate for the next updates (a schedule's value); moments are kept. */
  setLearningRate(lr: number): void {
    if (!(lr >= 0) || !Number.isFinite(lr)) throw new Error(`trainer: learning rate must be finite and >= 0, got ${lr}`);
    // tfjs reads the protected field on every applyGradients, so assigning it is enough
    for (const o of this.optimizers.values()) (o as unknown as { learningRate: number }).learningRate = lr;
  }

  /** Frees the optimizers' state (the models belong to the caller). */
  dispose(): void {
    for (const o of this.optimizers.values()) o.dispose();
  }

  /** Optimizer state of one model, for checkpoints. */
  optimizer(id: string): tf.Optimizer {
    const o = this.optimizers.get(id);
    if (!o) throw new Error(`trainer: unknown model '${id}'`);
    return o;
  }
}

function checkSample(s: TrainSample, i: number, models: Readonly<Record<string, Policy>>): void {
  if (!(s.model in models)) throw new Error(`trainer: sample ${i} names model '${s.model}'; known: ${Object.keys(models).join(', ')}`);
  const n = s.completion.length;
  if (s.oldLogProbs.length !== n) throw new Error(`trainer: sample ${i} has ${s.oldLogProbs.length} oldLogProbs for ${n} completion tokens`);
  if (typeof s.advantages !== 'number' && s.advantages.length !== n) throw new Error(`trainer: sample ${i} has ${s.advantages.length} advantages for ${n} completion tokens`);
  if (s.klCoef !== undefined && !(s.klCoef >= 0 && Number.isFinite(s.klCoef))) throw new Error(`trainer: sample ${i} has klCoef ${s.klCoef}; it must be finite and >= 0`);
  if (s.lossWeight !== undefined && !(s.lossWeight >= 0 && Number.isFinite(s.lossWeight))) throw new Error(`trainer: sample ${i} has lossWeight ${s.lossWeight}; it must be finite and >= 0`);
  if (Boolean(s.returns) !== Boolean(s.oldValues)) throw new Error(`trainer: sample ${i} has ${s.returns ? 'returns without oldValues' : 'oldValues without returns'}; the value loss needs both`);
  for (const key of ['refLogProbs', 'returns', 'oldValues'] as const) {
    const v = s[key];
    if (v && v.length !== n) throw new Error(`trainer: sample ${i} has ${v.length} ${key} for ${n} completion tokens`);
  }
}
