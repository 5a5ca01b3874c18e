import * as tf from '@tensorflow/tfjs';
import { generate, type GenerateOptions as ModelGenerateOptions, type Generation } from '../models/generate.js';
import type { LanguageModel } from '../models/generate.js';
import { microBatches, type PolicyInput } from '../models/types.js';
import { groupBy } from '../util/group.js';
import { Rng } from '../util/rng.js';
import { shards, threadsFor } from '../util/shards.js';

/** What a request may set: everything generate() takes except the seed, which the server owns. */
export type GenerateOptions = Omit<ModelGenerateOptions, 'seed'>;

/** Copies of the server's model in other threads (src/parallel), which generate a share of each batch. */
export interface GenerateReplicas {
  /** replicas besides this thread */
  readonly count: number;
  has(id: string): boolean;
  /** sends shard k to replica k and returns a function that waits for every answer, in replica order */
  generate(id: string, shards: number[][][], options: ModelGenerateOptions[]): () => Generation[][];
}

interface Pending<I, O> {
  input: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

/**
 * The one place a model runs during rollouts. Arenas call `generate` for one prompt at a
 * time; the server collects every request that arrives before the event loop turns (all
 * episodes in flight) and runs them as one batched, KV-cached pass per sampling setting.
 * Scoring requests (reference log-probs) are batched the same way.
 */
/** What an agent asks of a model: one completion per prompt (a BatchingServer, or a remote endpoint). */
export interface GenerateServer {
  generate(prompt: number[], options: GenerateOptions): Promise<Generation>;
  /** per-token log-probs of a given completion (a local model's server; a remote one has none) */
  logProbs?(input: PolicyInput, temperature?: number): Promise<number[]>;
}

export class BatchingServer {
  private queue: Pending<{ prompt: number[]; options: GenerateOptions }, Generation>[] = [];
  private scoring: Pending<PolicyInput & { temperature: number }, number[]>[] = [];
  private scheduled = false;
  private readonly rng: Rng;
  /** counters for metrics: forward passes and tokens generated */
  readonly stats = { batches: 0, requests: 0, generatedTokens: 0, seconds: 0 };

  /** `replicas`: when they hold this model, each batch is cut into one shard per thread, each sampled with its own seed */
  constructor(
    readonly id: string,
    readonly model: LanguageModel,
    seed = 0,
    readonly maxBatch = 512,
    readonly replicas?: GenerateReplicas,
  ) {
    this.rng = new Rng(seed);
  }

  /** Queues one prompt; a malformed prompt is refused here, so it cannot fail a whole batch. */
  generate(prompt: number[], options: GenerateOptions): Promise<Generation> {
    return new Promise((resolve, reject) => {
      const problem = this.check(prompt, [], options.maxNewTokens);
      if (problem) return reject(new Error(problem));
      this.queue.push({ input: { prompt, options }, resolve, reject });
      this.schedule();
    });
  }

  /** Per-token log-probs of a completion under this server's model, with logits divided by `temperature` as the sampler did. */
  logProbs(input: PolicyInput, temperature = 1): Promise<number[]> {
    return new Promise((resolve, reject) => {
      const problem = this.check(input.prompt, input.completion, 0);
      if (problem) return reject(new Error(problem));
      this.scoring.push({ input: { ...input, temperature }, resolve, reject });
      this.schedule();
    });
  }

  /** Why a request cannot run, or undefined: checked per request so one bad request fails alone. */
  private check(prompt: readonly number[], completion: readonly number[], extra: number): string | undefined {
    const { vocabSize } = this.model.config;
    const context = this.model.maxSequence;
    if (prompt.length === 0) return `server ${this.id}: empty prompt`;
    const bad = [...prompt, ...completion].find((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
    if (bad !== undefined) return `server ${this.id}: token id ${bad} outside vocabulary of ${vocabSize}`;
    const length = prompt.length + completion.length + extra;
    if (length > context) return `server ${this.id}: ${length} tokens exceed context ${context}`;
    return undefined;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after pending promise callbacks, so every episode that is ready to
    // ask has asked by then.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const queue = this.queue;
    const scoring = this.scoring;
    this.queue = [];
    this.scoring = [];
    for (const group of groupBy(queue, (p) => JSON.stringify(p.input.options)).values()) {
      for (let i = 0; i < group.length; i += this.maxBatch) this.runGenerate(group.slice(i, i + this.maxBatch));
    }
    for (const group of groupBy(scoring, (p) => p.input.temperature).values()) {
      for (const part of microBatches(group, this.maxBatch, this.model.maxSequence ?? Infinity, (p) => p.input))
        this.runScore(part);
    }
  }

  private runGenerate(batch: Pending<{ prompt: number[]; options: GenerateOptions }, Generation>[]): void {
    const t0 = performance.now();
    try {
      const out = this.sample(
        batch.map((p) => p.input.prompt),
        batch[0].input.options,
        this.rng.int(2 ** 31),
      );
      this.stats.batches++;
      this.stats.requests += batch.length;
      this.stats.generatedTokens += out.reduce((n, g) => n + g.tokens.length, 0);
      this.stats.seconds += (performance.now() - t0) / 1000;
      batch.forEach((p, i) => p.resolve(out[i]));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }

  /**
   * One batch, on this thread alone or cut into contiguous shards over the replicas; the
   * replicas' shards are sent first so that every thread samples at once. Shard k's seed
   * is derived from the batch's, so a run with a fixed number of threads repeats itself.
   */
  private sample(prompts: number[][], options: GenerateOptions, seed: number): Generation[] {
    const threads = threadsFor(prompts.length, this.replicas, this.id);
    if (threads === 1) return generate(this.model, prompts, { ...options, seed });
    const parts = shards(prompts, threads);
    const seeds = parts.map((_, k) => (k === 0 ? seed : new Rng(seed * 31 + k).int(2 ** 31)));
    const others = this.replicas!.generate(
      this.id,
      parts.slice(1),
      seeds.slice(1).map((s) => ({ ...options, seed: s })),
    );
    const first = generate(this.model, parts[0], { ...options, seed });
    return [first, ...others()].flat();
  }

  private runScore(batch: Pending<PolicyInput & { temperature: number }, number[]>[]): void {
    try {
      const rows = tf.tidy(() =>
        this.model
          .score(
            batch.map((p) => p.input),
            batch[0].input.temperature,
          )
          .logProbs.arraySync(),
      );
      batch.forEach((p, i) => p.resolve(rows[i].slice(0, p.input.completion.length)));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}
