import * as tf from '@tensorflow/tfjs';
import { adam } from '../backend/fused/adam.js';
import { applyClipped } from './apply.js';
import { addGrads, addIndexed, toIndexed, type IndexedGrads } from './grads.js';
import { shards, threadsFor } from '../util/shards.js';
import { Rng } from '../util/rng.js';
import type { Policy } from '../models/types.js';

/** A model supervised training runs on: any policy whose passes are bounded (TinyLM, a Hugging Face model). */
type Trainable = Policy & { readonly maxSequence: number };
import { microBatches, type PolicyInput } from '../models/types.js';

export interface SupervisedOptions {
  /** optimizer steps */
  steps: number;
  /** examples per step, drawn without replacement per epoch */
  batchSize: number;
  /** Adam learning rate */
  lr: number;
  /** global gradient-norm clip */
  maxGradNorm?: number;
  /** seed of the example order */
  seed?: number;
  /** called after every step with its mean loss (nats per completion token); returning true stops training */
  onStep?: (step: number, loss: number) => boolean | void;
}

/** Copies of the trained model in other threads (src/parallel): each takes a shard of every batch. */
export interface NllReplicas {
  readonly count: number;
  has(id: string): boolean;
  /** sends shard k to replica k: the gradients of its summed NLL divided by the whole batch's `tokens`; the function waits for the answers */
  nllGradients(id: string, shards: PolicyInput[][], tokens: number): () => { loss: number; grads: IndexedGrads }[];
  publish(id: string): void;
}

/**
 * The gradients of Σ −log p over `batch`'s completion tokens, divided by `tokens` (the whole
 * batch's count), in as many passes as the model's context needs (microBatches).
 */
export function nllGradients(
  model: Trainable,
  batch: readonly PolicyInput[],
  tokens: number,
): { loss: number; grads: tf.NamedTensorMap } {
  let loss = 0;
  let grads: tf.NamedTensorMap = {};
  try {
    for (const part of microBatches(batch, batch.length, model.maxSequence)) {
      const { value, grads: g } = tf.variableGrads(
        () => model.score(part).logProbs.sum().div(tokens).neg() as tf.Scalar,
        model.variables(),
      );
      loss += value.dataSync()[0];
      value.dispose();
      grads = addGrads(grads, g);
    }
  } catch (err) {
    tf.dispose(Object.values(grads));
    throw err;
  }
  return { loss, grads };
}

/** nllGradients for a replica: gradients keyed by variable index. */
export function nllShard(
  model: Trainable,
  batch: readonly PolicyInput[],
  tokens: number,
): { loss: number; grads: IndexedGrads } {
  const { loss, grads } = nllGradients(model, batch, tokens);
  return { loss, grads: toIndexed(model.variables(), grads) };
}

/**
 * Supervised next-token training (how base models are made): minimises the mean negative
 * log-likelihood of each example's completion tokens given its prompt. For plain text,
 * use prompt [BOS] and completion = the text's ids followed by EOS. One Adam and one
 * example order live as long as the trainer, so training in chunks (with evaluation in
 * between) is the same as training in one go. With replicas (as `shared.id`), each batch is
 * cut into one shard per thread and the shards' gradients added in order.
 */
export class SupervisedTrainer {
  readonly optimizer: tf.Optimizer;
  private rng: Rng;
  private order: number[] = [];
  steps = 0;

  constructor(
    private readonly model: Trainable,
    private readonly examples: readonly PolicyInput[],
    private readonly o: Omit<SupervisedOptions, 'steps' | 'onStep'>,
    private shared?: { replicas: NllReplicas; id: string },
  ) {
    if (examples.length === 0) throw new Error('supervised: no examples');
    if (!Number.isInteger(o.batchSize) || o.batchSize <= 0)
      throw new Error(`supervised: batchSize must be a positive integer, got ${o.batchSize}`);
    this.optimizer = adam(o.lr, 0.9, 0.999, 1e-8);
    this.rng = new Rng(o.seed ?? 0);
  }

  /** One optimizer step on the next batch (examples drawn without replacement per epoch); returns its loss. */
  step(): number {
    if (this.order.length < this.o.batchSize) this.order = this.order.concat(shuffled(this.examples.length, this.rng));
    const batch = this.order.splice(0, this.o.batchSize).map((i) => this.examples[i]);
    // the score mask counts completion tokens, and every example's completion is scored whole
    const tokens = batch.reduce((n, e) => n + e.completion.length, 0);
    const threads = threadsFor(batch.length, this.shared?.replicas, this.shared?.id ?? '');
    const parts = shards(batch, threads);
    const others =
      threads > 1 ? this.shared!.replicas.nllGradients(this.shared!.id, parts.slice(1), tokens) : undefined;
    let { loss, grads } = nllGradients(this.model, parts[0], tokens);
    try {
      for (const part of others?.() ?? []) {
        loss += part.loss;
        grads = addIndexed(grads, this.model.variables(), part.grads);
      }
    } catch (err) {
      tf.dispose(Object.values(grads));
      throw err;
    }
    const r = applyClipped(this.optimizer, grads, loss, this.o.maxGradNorm ?? 1, this.model.gradNormWeights?.());
    this.shared?.replicas.publish(this.shared.id);
    if (r.skipped) throw new Error(`supervised: step ${this.steps} skipped: ${r.reason}`);
    this.steps++;
    return loss;
  }

  /** Shares each batch with replicas from now on (started after a resume restored the weights they copy). */
  share(shared: { replicas: NllReplicas; id: string } | undefined): void {
    this.shared = shared;
  }

  /** Where the trainer stands in its example order: with the weights and Adam's state, what continues it exactly. */
  get position(): TrainerPosition {
    return { steps: this.steps, rng: this.rng.seedState, order: [...this.order] };
  }

  /** Continues from a saved position (the weights and the optimizer's state are restored beside it). */
  restorePosition(p: TrainerPosition): void {
    if (!Number.isInteger(p.steps) || p.steps < 0 || !Number.isInteger(p.rng) || !Array.isArray(p.order))
      throw new Error(`supervised: not a trainer position: ${JSON.stringify(p).slice(0, 80)}`);
    const bad = p.order.find((i) => !Number.isInteger(i) || i < 0 || i >= this.examples.length);
    if (bad !== undefined)
      throw new Error(`supervised: the position names example ${bad}; there are ${this.examples.length}`);
    this.steps = p.steps;
    this.rng = new Rng(p.rng);
    this.order = [...p.order];
  }

  dispose(): void {
    this.optimizer.dispose();
  }
}

/** A SupervisedTrainer's place: steps taken, the order Rng's state, what is left of this epoch's order. */
export interface TrainerPosition {
  steps: number;
  rng: number;
  order: number[];
}

/** Trains for `o.steps` steps (or until onStep returns true) and returns every step's loss. */
export function trainSupervised(model: Trainable, examples: readonly PolicyInput[], o: SupervisedOptions): number[] {
  const trainer = new SupervisedTrainer(model, examples, o);
  const losses: number[] = [];
  try {
    for (let step = 0; step < o.steps; step++) {
      losses.push(trainer.step());
      if (o.onStep?.(step, losses[step])) break;
    }
  } finally {
    trainer.dispose();
  }
  return losses;
}

/** Mean negative log-likelihood per completion token, without training. */
export function evaluateNll(model: Trainable, examples: readonly PolicyInput[], batchSize = 64): number {
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < examples.length; i += batchSize) {
    tf.tidy(() => {
      const s = model.score(examples.slice(i, i + batchSize));
      nll -= s.logProbs.sum().dataSync()[0];
      tokens += s.mask.sum().dataSync()[0];
    });
  }
  return nll / Math.max(1, tokens);
}

function shuffled(n: number, rng: Rng): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
