import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { BackendChoice } from '../backend/index.js';
import type { Accelerate } from '../backend/accelerate.js';
import type { GenerateOptions, Generation } from '../models/generate.js';
import type { GradientReplicas, ShardGradients, TrainSample, TrainerConfig, UpdatePlan } from '../rl/trainer.js';
import type { GenerateReplicas } from '../serving/server.js';
import type { NllReplicas } from '../rl/supervised.js';
import type { PolicyInput } from '../models/types.js';
import type { IndexedGrads } from '../rl/grads.js';
import { startTsWorker } from '../util/worker.js';
import { Link } from './link.js';
import { describeCopies, published, type Replicable } from './copies.js';

/** The threads a run uses: `auto` is one per core. */
export function workerCount(setting: 'auto' | number): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/**
 * The replicas a run with `workers` threads needs: none for one thread, else one per thread
 * besides this one.
 */
export function startReplicas(
  workers: 'auto' | number,
  setup: ReplicaSetup,
  models: Record<string, Replicable>,
): Promise<Replicas | undefined> {
  const n = workerCount(workers);
  return n > 1 ? Replicas.start(n - 1, setup, models) : Promise.resolve(undefined);
}

/** What every replica is built from: the backend, as this thread loaded it. */
export interface ReplicaSetup {
  backend: Exclude<BackendChoice, 'auto'>;
  accelerate: Accelerate;
}

/** A model's weights as the replicas read them: one shared buffer, in `variables()` order. */
interface SharedWeights {
  model: Replicable;
  buffer: Float32Array;
  version: number;
}

/**
 * Replicas of the run's models in worker threads, each with its own tensor backend: they
 * generate a share of each rollout batch and compute a share of each update's gradients,
 * so a run uses every core. This thread is replica 0 and keeps the only optimizer; the
 * others read the weights it publishes to shared memory after every update, and load them
 * before their next work, so every replica acts with the same policy.
 */
export class Replicas implements GradientReplicas, GenerateReplicas, NllReplicas {
  private constructor(
    private readonly workers: Worker[],
    private readonly links: Link[],
    private readonly weights: Map<string, SharedWeights>,
  ) {}

  /**
   * Starts `count` replicas (besides this thread) of `models`; resolves once every one has
   * built its copies (copies.ts). Only the trained variables are published after an update:
   * a TinyLM's, an adapter's (its base stays as built), or a fully fine-tuned base's.
   */
  static async start(count: number, setup: ReplicaSetup, models: Record<string, Replicable>): Promise<Replicas> {
    if (!(Number.isSafeInteger(count) && count > 0))
      throw new Error(`replicas: count must be a positive integer, got ${count}`);
    const weights = new Map<string, SharedWeights>();
    const shared: Record<string, SharedArrayBuffer> = {};
    for (const [id, model] of Object.entries(models)) {
      shared[id] = new SharedArrayBuffer(4 * published(model).reduce((n, v) => n + v.size, 0));
      weights.set(id, { model, buffer: new Float32Array(shared[id]), version: 0 });
    }
    const copies = describeCopies(models);
    const links = Array.from({ length: count }, (_, k) => new Link(`replica ${k + 1}`));
    const workers = links.map((link, k) =>
      startTsWorker(
        new URL('./replica.ts', import.meta.url),
        { index: k + 1, setup, ...copies, shared, port: link.remote, flag: link.flag.buffer },
        [link.remote],
      ),
    );
    const replicas = new Replicas(workers, links, weights);
    try {
      await Promise.all(
        workers.map(async (w, k) => {
          const [msg] = (await Promise.race([
            once(w, 'message'),
            once(w, 'error').then(([e]) => {
              throw e;
            }),
          ])) as [{ ready?: boolean; error?: string }];
          if (msg.error) throw new Error(`replica ${k + 1} did not start: ${msg.error}`);
        }),
      );
    } catch (err) {
      await replicas.close();
      throw err;
    }
    for (const w of workers) w.unref(); // a run that fails does not wait for its replicas
    for (const id of weights.keys()) replicas.publish(id);
    return replicas;
  }

  get count(): number {
    return this.workers.length;
  }

  has(id: string): boolean {
    return this.weights.has(id);
  }

  publish(id: string): void {
    const w = this.shared(id);
    let offset = 0;
    for (const v of published(w.model)) {
      w.buffer.set(v.dataSync() as Float32Array, offset);
      offset += v.size;
    }
    w.version++;
  }

  generate(id: string, shards: number[][][], options: GenerateOptions[]): () => Generation[][] {
    return this.call(
      id,
      shards.map((prompts, k) => ({ op: 'generate', prompts, options: options[k] })),
    );
  }

  gradients(id: string, shards: TrainSample[][], plan: UpdatePlan, config: TrainerConfig): () => ShardGradients[] {
    return this.call(
      id,
      shards.map((shard) => ({ op: 'gradients', shard, plan, config })),
    );
  }

  nllGradients(id: string, shards: PolicyInput[][], tokens: number): () => { loss: number; grads: IndexedGrads }[] {
    return this.call(
      id,
      shards.map((shard) => ({ op: 'nll', shard, tokens })),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    for (const l of this.links) l.close();
  }

  /** Sends request k to replica k (at most one each) and returns the wait for their answers, in order. */
  private call<T>(id: string, requests: Record<string, unknown>[]): () => T[] {
    if (requests.length > this.links.length)
      throw new Error(`replicas: ${requests.length} shards for ${this.links.length} replicas`);
    const { version } = this.shared(id);
    requests.forEach((r, k) => this.links[k].send({ ...r, id, version }));
    return () => requests.map((_, k) => this.links[k].receive<T>());
  }

  private shared(id: string): SharedWeights {
    const w = this.weights.get(id);
    if (!w)
      throw new Error(`replicas: no replica of model '${id}'; replicated: ${[...this.weights.keys()].join(', ')}`);
    return w;
  }
}
