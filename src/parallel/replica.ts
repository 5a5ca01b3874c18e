// One replica thread (see replicas.ts): its own backend, a copy of each model (copies.ts), and
// a trainer that computes gradients only (the optimizer lives in the main thread).
import * as tf from '@tensorflow/tfjs';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { initBackend } from '../backend/index.js';
import { generate, type GenerateOptions } from '../models/generate.js';
import { nllShard } from '../rl/supervised.js';
import type { PolicyInput } from '../models/types.js';
import { JointTrainer, type TrainSample, type TrainerConfig, type UpdatePlan } from '../rl/trainer.js';
import type { ReplicaSetup } from './replicas.js';
import { buildCopies, published, type BaseCopy, type ModelCopy } from './copies.js';
import { serve } from './link.js';

interface Data {
  index: number;
  setup: ReplicaSetup;
  models: Record<string, ModelCopy>;
  bases: BaseCopy[];
  /** each model's published weights, in `variables()` order */
  shared: Record<string, SharedArrayBuffer>;
  port: MessagePort;
  flag: SharedArrayBuffer;
}
type Request = { id: string; version: number } & (
  | { op: 'generate'; prompts: number[][]; options: GenerateOptions }
  | { op: 'gradients'; shard: TrainSample[]; plan: UpdatePlan; config: TrainerConfig }
  | { op: 'nll'; shard: PolicyInput[]; tokens: number }
);

const data = workerData as Data;
try {
  await initBackend(data.setup.backend, data.setup.accelerate);
  const models = buildCopies(data);
  const loaded: Record<string, number> = Object.fromEntries(Object.keys(models).map((id) => [id, -1]));
  // one gradient-only trainer per trainer configuration the main thread sends (its optimizers stay unused)
  const trainers = new Map<string, JointTrainer>();
  const trainer = (config: TrainerConfig) => {
    const key = JSON.stringify(config);
    if (!trainers.has(key)) trainers.set(key, new JointTrainer(models, config));
    return trainers.get(key)!;
  };
  /** loads model `id`'s published weights when they are newer than the ones this replica holds */
  const sync = (id: string, version: number) => {
    if (!models[id]) throw new Error(`no replica of model '${id}'`);
    if (loaded[id] === version) return;
    const all = new Float32Array(data.shared[id]);
    let offset = 0;
    for (const v of published(models[id])) {
      tf.tidy(() => v.assign(tf.tensor(all.subarray(offset, offset + v.size), v.shape)));
      offset += v.size;
    }
    loaded[id] = version;
  };
  serve(data.port, new Int32Array(data.flag), (r: Request) => {
    sync(r.id, r.version);
    if (r.op === 'generate') return { result: generate(models[r.id], r.prompts, r.options) };
    if (r.op === 'gradients') {
      const out = trainer(r.config).shardGradients(r.id, r.shard, r.plan);
      return { result: out, transfer: Object.values(out.grads).map((g) => g.buffer as ArrayBuffer) };
    }
    if (r.op === 'nll') {
      const out = nllShard(models[r.id], r.shard, r.tokens);
      return { result: out, transfer: Object.values(out.grads).map((g) => g.buffer as ArrayBuffer) };
    }
    throw new Error(`unknown request '${(r as { op: string }).op}'`);
  });
  parentPort!.postMessage({ ready: true });
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).stack ?? String(err) });
}
