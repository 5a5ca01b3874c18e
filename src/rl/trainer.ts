/**
 * The joint update, one piece: grouping samples by model, planning each model's global batch
 * (token counts for the loss aggregation, micro-batches), scoring and differentiating each
 * part, adding the parts' and the worker threads' gradients, clipping and stepping. Each of
 * these reads the same plan and the same running statistics, and the losses themselves
 * (rl/loss.ts), KL (rl/kl.ts), gradient arithmetic (rl/grads.ts) and clipping (rl/apply.ts)
 * already live apart; cutting the rest would pass that state between files.
 */
import * as tf from '@tensorflow/tfjs';
import { adam } from '../backend/fused/adam.js';
import type { Policy, PolicyInput } from '../models/types.js';
import { microBatches, padRows } from '../models/types.js';
import { broadcastOverTokens } from './advantages.js';
import { groupBy } from '../util/group.js';
import { applyClipped } from './apply.js';
import { HostAdam } from './host-adam.js';
import { addGrads, addIndexed, toIndexed, type IndexedGrads } from './grads.js';
import { shards as cut, threadsFor } from '../util/shards.js';
import { klPenalty, type KlKind } from './kl.js';
import {
  aggLoss,
  entropyBonus,
  maskedMeanTensor,
  policyLoss,
  valueLoss,
  type AggMode,
  type GlobalBatch,
} from './loss.js';

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
  /** truncated importance weights per completion token, when another policy sampled it (a stale rollout worker; see rl/rollout-is.ts) */
  isWeights?: readonly number[];
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
  /**
   * samples per forward/backward pass; a model's larger batch is split and its gradients
   * summed, with the whole batch's normalisers, into one step (equal to the unsplit step)
   */
  microBatch: number;
}

export const DEFAULT_TRAINER: TrainerConfig = {
  lr: 1e-4,
  beta1: 0.9,
  beta2: 0.999,
  epsilon: 1e-8,
  clipLow: 0.2,
  clipHigh: 0.2,
  clipRatioC: 3,
  aggMode: 'token-mean',
  entropyCoef: 0,
  klCoef: 0,
  klKind: 'k3',
  valueCoef: 0.5,
  clipRangeValue: 0.2,
  maxGradNorm: 1,
  temperature: 1,
  // A pass holds ~180 KB per token on wasm (measured, reference model): 256 sequences of 48
  // tokens peak at ~2.4 GB RSS, 512 abort at wasm's 4 GB heap. Up to 256 samples per model
  // is one pass, bit for bit the update before micro-batching.
  microBatch: 256,
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
 * What every micro-batch (and every replica's shard) of one model's batch shares: the
 * normalisers are counted over the whole batch. Plain JSON, so it can be sent to a replica.
 */
export interface UpdatePlan {
  /** per role, in first-seen order; `lossScaleFactor` is the unsplit batch's grid width (its longest completion, at least 1) */
  roles: [string, { global: GlobalBatch; klCoef: number; weight: number }][];
  tokens: number;
  kl: boolean;
  value: boolean;
}

type Stats = Pick<ModelStep, 'roleLoss' | 'clipfrac' | 'ppoKl' | 'entropy' | 'kl' | 'valueLoss'>;

/** A replica's answer: its shard's summed loss, its shares of the statistics, and its gradients by variable index. */
export interface ShardGradients {
  loss: number;
  stats: Stats;
  grads: IndexedGrads;
}

/**
 * Copies of the trainer's models in other threads (src/parallel), for data-parallel updates:
 * each takes one shard of a batch and returns its gradients.
 */
export interface GradientReplicas {
  /** replicas besides this thread */
  readonly count: number;
  /** whether the replicas hold model `id` */
  has(id: string): boolean;
  /** sends shard k to replica k and returns a function that waits for every answer, in replica order */
  gradients(id: string, shards: TrainSample[][], plan: UpdatePlan, config: TrainerConfig): () => ShardGradients[];
  /** the model's weights changed: every replica loads them before its next work */
  publish(id: string): void;
}

function addStats(into: Stats, more: Stats): void {
  for (const [role, v] of Object.entries(more.roleLoss)) into.roleLoss[role] = (into.roleLoss[role] ?? 0) + v;
  into.clipfrac += more.clipfrac;
  into.ppoKl += more.ppoKl;
  into.entropy += more.entropy;
  if (into.kl !== undefined) into.kl += more.kl ?? 0;
  if (into.valueLoss !== undefined) into.valueLoss += more.valueLoss ?? 0;
}

/**
 * Above this many trainable values a model's Adam moments live in Node's memory (HostAdam,
 * the same arithmetic bit for bit): two moments of a 135M model are 1 GB, which with its
 * weights and gradients passes what tfjs-wasm's heap addresses.
 */
export const HOST_ADAM_VALUES = 32 * 2 ** 20;

function optimizerFor(model: Policy, c: TrainerConfig): tf.Optimizer {
  const values = model.variables().reduce((n, v) => n + v.size, 0);
  return values > HOST_ADAM_VALUES
    ? new HostAdam(c.lr, c.beta1, c.beta2, c.epsilon)
    : adam(c.lr, c.beta1, c.beta2, c.epsilon);
}

/**
 * One joint update: samples are grouped by model; each model gets one optimizer step on
 * the sum of its roles' losses, over its own variables and no others. A batch larger than
 * `microBatch` is scored in passes whose gradients add up to the one-pass gradient.
 */
export class JointTrainer {
  readonly config: TrainerConfig;
  private readonly optimizers = new Map<string, tf.Optimizer>();

  /** `replicas`: copies of (some of) the models in other threads, which then share every update of those models */
  constructor(
    readonly models: Readonly<Record<string, Policy>>,
    config: Partial<TrainerConfig> = {},
    readonly replicas?: GradientReplicas,
  ) {
    this.config = { ...DEFAULT_TRAINER, ...config };
    const c = this.config;
    if (!(c.lr > 0)) throw new Error(`trainer: lr must be > 0, got ${c.lr}`);
    if (!(c.maxGradNorm > 0)) throw new Error(`trainer: maxGradNorm must be > 0, got ${c.maxGradNorm}`);
    if (!(Number.isSafeInteger(c.microBatch) && c.microBatch > 0))
      throw new Error(`trainer: microBatch must be a positive integer, got ${c.microBatch}`);
    for (const [id, model] of Object.entries(models)) this.optimizers.set(id, optimizerFor(model, c));
  }

  step(samples: readonly TrainSample[]): Record<string, ModelStep> {
    samples.forEach((s, i) => checkSample(s, i, this.models));
    const report: Record<string, ModelStep> = {};
    for (const [id, batch] of groupBy(samples, (s) => s.model)) report[id] = this.updateModel(id, batch);
    return report;
  }

  private updateModel(id: string, batch: TrainSample[]): ModelStep {
    const { grads, ...step } = this.gradients(id, batch);
    const applied = applyClipped(this.optimizers.get(id)!, grads, step.loss, this.config.maxGradNorm);
    if (this.replicas?.has(id)) this.replicas.publish(id);
    return { ...step, ...applied };
  }

  /**
   * The summed loss of `batch` (samples of model `id`), its statistics and its gradients,
   * without a step; the caller disposes `grads`. Micro-batch by micro-batch: each pass's
   * gradients join the sum and its tensors are freed before the next pass. With replicas,
   * the batch is cut into one contiguous shard per thread (this one takes the first) and the
   * shards' gradients, each taken with the whole batch's normalisers, are added in shard order.
   */
  gradients(
    id: string,
    batch: TrainSample[],
  ): Omit<ModelStep, 'gradNorm' | 'skipped' | 'reason'> & { grads: tf.NamedTensorMap } {
    batch.forEach((s, i) => {
      checkSample(s, i, this.models);
      if (s.model !== id) throw new Error(`trainer: sample ${i} is for model '${s.model}', not '${id}'`);
    });
    const model = this.models[id];
    const plan = this.plan(model, batch);
    const threads = threadsFor(batch.length, this.replicas, id);
    const shards = cut(batch, threads);
    const others = threads > 1 ? this.replicas!.gradients(id, shards.slice(1), plan, this.config) : undefined;
    const { loss, stats, grads } = this.accumulate(model, shards[0], plan);
    let sum = grads;
    let total = loss;
    try {
      for (const part of others?.() ?? []) {
        total += part.loss;
        addStats(stats, part.stats);
        sum = addIndexed(sum, model.variables(), part.grads);
      }
    } catch (err) {
      tf.dispose(Object.values(sum));
      throw err;
    }
    return { samples: batch.length, tokens: plan.tokens, loss: total, ...stats, grads: sum };
  }

  /**
   * A replica's share of an update: the gradients of `shard` under the whole batch's `plan`,
   * keyed by variable index (names differ between threads), as plain arrays to send back.
   */
  shardGradients(id: string, shard: TrainSample[], plan: UpdatePlan): ShardGradients {
    const model = this.models[id];
    if (!model) throw new Error(`trainer: unknown model '${id}'`);
    const { loss, stats, grads } = this.accumulate(model, shard, plan);
    return { loss, stats, grads: toIndexed(model.variables(), grads) };
  }

  private accumulate(
    model: Policy,
    batch: TrainSample[],
    plan: UpdatePlan,
  ): { loss: number; stats: Stats; grads: tf.NamedTensorMap } {
    const roleLoss = Object.fromEntries(plan.roles.map(([role]) => [role, 0]));
    const stats: Stats = {
      roleLoss,
      clipfrac: 0,
      ppoKl: 0,
      entropy: 0,
      kl: plan.kl ? 0 : undefined,
      valueLoss: plan.value ? 0 : undefined,
    };
    let grads: tf.NamedTensorMap = {};
    let loss = 0;
    try {
      for (const part of microBatches(batch, this.config.microBatch, model.maxSequence ?? Infinity)) {
        const { value, grads: partGrads } = tf.variableGrads(
          () => this.partLoss(model, part, plan, stats),
          model.variables(),
        );
        loss += value.dataSync()[0];
        value.dispose();
        grads = addGrads(grads, partGrads);
      }
    } catch (err) {
      tf.dispose(Object.values(grads)); // a later pass failed: the sum so far would leak
      throw err;
    }
    return { loss, stats, grads };
  }

  private plan(model: Policy, batch: TrainSample[]): UpdatePlan {
    const c = this.config;
    const width = Math.max(1, ...batch.map((s) => s.completion.length));
    const counts = new Map<string, { tokens: number; rows: number; klCoef: number; weight: number }>();
    for (const s of batch) {
      // a role's KL coefficient and loss weight are those of its first sample
      const n = counts.get(s.role) ?? { tokens: 0, rows: 0, klCoef: s.klCoef ?? c.klCoef, weight: s.lossWeight ?? 1 };
      counts.set(s.role, {
        ...n,
        tokens: n.tokens + s.completion.length,
        rows: n.rows + (s.completion.length > 0 ? 1 : 0),
      });
    }
    // max(·, 1) as aggLoss's defaults: a role without tokens then adds 0, not 0/0
    const roles: UpdatePlan['roles'] = [...counts].map(([role, { tokens, rows, klCoef, weight }]) => [
      role,
      {
        global: { batchNumTokens: Math.max(1, tokens), globalBatchSize: Math.max(1, rows), lossScaleFactor: width },
        klCoef,
        weight,
      },
    ]);
    return {
      roles,
      tokens: batch.reduce((n, s) => n + s.completion.length, 0),
      kl: roles.some(([, r]) => r.klCoef !== 0),
      value: c.valueCoef !== 0 && model.hasValueHead && batch.every((s) => s.returns && s.oldValues),
    };
  }

  /** The loss of one micro-batch, a share of the whole batch's; adds its share of each statistic to `stats`. */
  private partLoss(model: Policy, part: TrainSample[], plan: UpdatePlan, stats: Stats): tf.Scalar {
    const c = this.config;
    const scored = model.score(part, c.temperature);
    const width = scored.mask.shape[1];
    const longest = Math.max(1, ...part.map((s) => s.completion.length));
    if (width !== longest)
      throw new Error(
        `trainer: ${model.kind} scored a grid ${width} wide for completions of at most ${longest} tokens`,
      );
    const grid = (rows: (readonly number[])[]) => tf.tensor2d(padRows(rows, width), [part.length, width]);
    const old = grid(part.map((s) => s.oldLogProbs));
    const adv = grid(
      part.map((s) =>
        typeof s.advantages === 'number'
          ? broadcastOverTokens([s.advantages], [s.completion.map(() => 1)])[0]
          : s.advantages,
      ),
    );
    const kl = plan.kl ? this.klMatrix(part, scored.logProbs, grid) : undefined;
    const isWeights = part.some((s) => s.isWeights)
      ? grid(part.map((s) => s.isWeights ?? s.completion.map(() => 1)))
      : undefined;
    const ofAll = (n: number) => n / Math.max(1, plan.tokens); // a micro-batch statistic's weight in the whole batch's
    let total = tf.scalar(0);
    for (const [role, r] of plan.roles) {
      if (!part.some((s) => s.role === role)) continue; // adds nothing to the loss or its gradient
      const tokens = part.reduce((n, s) => n + (s.role === role ? s.completion.length : 0), 0);
      const mask = scored.mask.mul(
        tf.tensor2d(
          part.map((s) => (s.role === role ? 1 : 0)),
          [part.length, 1],
        ),
      ) as tf.Tensor2D;
      const pg = policyLoss({
        oldLogProb: old,
        logProb: scored.logProbs,
        advantages: adv,
        mask,
        clipLow: c.clipLow,
        clipHigh: c.clipHigh,
        clipRatioC: c.clipRatioC,
        aggMode: c.aggMode,
        global: r.global,
        rolloutIsWeights: isWeights,
      });
      let loss: tf.Scalar = pg.loss;
      if (c.entropyCoef !== 0)
        loss = loss.sub(entropyBonus(scored.entropy, mask, c.aggMode, r.global).mul(c.entropyCoef));
      if (kl && r.klCoef !== 0) loss = loss.add(aggLoss(kl, mask, c.aggMode, r.global).mul(r.klCoef));
      if (plan.value && scored.values) {
        const v = valueLoss({
          vpreds: scored.values,
          returns: grid(part.map((s) => s.returns!)),
          values: grid(part.map((s) => s.oldValues!)),
          mask,
          clipRangeValue: c.clipRangeValue,
          aggMode: c.aggMode,
          global: r.global,
        });
        stats.valueLoss! += v.loss.dataSync()[0];
        loss = loss.add(v.loss.mul(c.valueCoef));
      }
      if (r.weight !== 1) loss = loss.mul(r.weight);
      stats.roleLoss[role] += loss.dataSync()[0];
      stats.clipfrac += pg.clipfrac * ofAll(tokens); // token-weighted, so it equals one mean over all roles' tokens
      stats.ppoKl += pg.ppoKl * ofAll(tokens);
      total = total.add(loss);
    }
    const tokens = part.reduce((n, s) => n + s.completion.length, 0);
    stats.entropy += maskedMeanTensor(scored.entropy, scored.mask).dataSync()[0] * ofAll(tokens);
    if (kl) stats.kl! += maskedMeanTensor(kl, scored.mask).dataSync()[0] * ofAll(tokens);
    return total;
  }

  /** Per-token KL to the reference model, zero in rows that carry no refLogProbs. */
  private klMatrix(
    batch: TrainSample[],
    logProbs: tf.Tensor2D,
    grid: (rows: (readonly number[])[]) => tf.Tensor2D,
  ): tf.Tensor2D {
    const ref = grid(batch.map((s) => s.refLogProbs ?? s.oldLogProbs));
    const has = tf.tensor2d(
      batch.map((s) => (s.refLogProbs ? 1 : 0)),
      [batch.length, 1],
    );
    return klPenalty(logProbs, ref, this.config.klKind).mul(has) as tf.Tensor2D;
  }

  /** Sets every model's Adam rate for the next updates (a schedule's value); moments are kept. */
  setLearningRate(lr: number): void {
    if (!(lr >= 0) || !Number.isFinite(lr))
      throw new Error(`trainer: learning rate must be finite and >= 0, got ${lr}`);
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
  if (!(s.model in models))
    throw new Error(`trainer: sample ${i} names model '${s.model}'; known: ${Object.keys(models).join(', ')}`);
  const n = s.completion.length;
  if (s.oldLogProbs.length !== n)
    throw new Error(`trainer: sample ${i} has ${s.oldLogProbs.length} oldLogProbs for ${n} completion tokens`);
  if (typeof s.advantages !== 'number' && s.advantages.length !== n)
    throw new Error(`trainer: sample ${i} has ${s.advantages.length} advantages for ${n} completion tokens`);
  if (s.klCoef !== undefined && !(s.klCoef >= 0 && Number.isFinite(s.klCoef)))
    throw new Error(`trainer: sample ${i} has klCoef ${s.klCoef}; it must be finite and >= 0`);
  if (s.lossWeight !== undefined && !(s.lossWeight >= 0 && Number.isFinite(s.lossWeight)))
    throw new Error(`trainer: sample ${i} has lossWeight ${s.lossWeight}; it must be finite and >= 0`);
  if (Boolean(s.returns) !== Boolean(s.oldValues))
    throw new Error(
      `trainer: sample ${i} has ${s.returns ? 'returns without oldValues' : 'oldValues without returns'}; the value loss needs both`,
    );
  for (const key of ['refLogProbs', 'returns', 'oldValues', 'isWeights'] as const) {
    const v = s[key];
    if (v && v.length !== n) throw new Error(`trainer: sample ${i} has ${v.length} ${key} for ${n} completion tokens`);
  }
}
