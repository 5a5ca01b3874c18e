// Saving and restoring a game-pg run: the MLP, its optimizer and the run's state, and the
// pool's frozen snapshots as plain weights.
import * as tf from '@tensorflow/tfjs';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AverageState } from '../src/games/average.js';
import type { CriticState } from '../src/games/critic.js';
import type { TabularPolicy } from '../src/games/exploitability.js';
import type { PoolState } from '../src/games/pool.js';
import type { Attachments } from '../src/models/checkpoint.js';
import { MlpPolicy, mlpWeightShapes } from '../src/models/mlp.js';
import { loadModel, saveModel } from '../src/models/store.js';

export interface RunState {
  next: number;
  baseline: number[];
  stateBaseline: [string, number][];
  drawSeed: number;
  magnet: TabularPolicy;
  average: AverageState;
  pool?: PoolState;
  snapshots?: Record<string, Record<string, number[]>>;
  actionValue?: CriticState['actionValue'];
  actionStats?: CriticState['actionStats'];
}

/** A frozen copy of the learner, for the pool. */
export function copyOf(m: MlpPolicy): MlpPolicy {
  return new MlpPolicy(m.config, m.weights);
}

export function weightsOf(m: MlpPolicy): Record<string, number[]> {
  return Object.fromEntries(Object.entries(m.weights).map(([k, v]) => [k, Array.from(v.dataSync())]));
}

export function fromWeights(config: MlpPolicy['config'], w: Record<string, number[]>): MlpPolicy {
  const shapes = mlpWeightShapes(config);
  const tensors = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, tf.tensor(v, shapes[k])]));
  const m = new MlpPolicy(config, tensors);
  tf.dispose(Object.values(tensors));
  return m;
}

/**
 * Saves the model, its optimizer and the run's state: the checkpoint is written beside the
 * old one and renamed over it, so a kill mid-save leaves the previous checkpoint whole;
 * progress lines after the checkpoint are dropped when the run resumes.
 */
export async function saveRun(
  dir: string,
  mlp: MlpPolicy,
  optimizer: Attachments,
  extra: { args: Record<string, string>; state: RunState },
): Promise<void> {
  const next = join(dir, 'checkpoint.next');
  rmSync(next, { recursive: true, force: true });
  await saveModel(next, mlp, undefined, extra as unknown as Record<string, unknown>, optimizer);
  rmSync(join(dir, 'checkpoint'), { recursive: true, force: true });
  renameSync(next, join(dir, 'checkpoint'));
}

export async function loadRun(
  dir: string,
): Promise<{ mlp: MlpPolicy; attachments: Record<string, Uint8Array>; args: Record<string, string>; state: RunState }> {
  const where = join(dir, 'checkpoint');
  if (!existsSync(where))
    throw new Error(`--resume: ${where} does not exist (runs save every --save-every iterations)`);
  const loaded = await loadModel(where);
  if (loaded.kind !== 'mlp') throw new Error(`--resume: ${where} holds a ${loaded.kind}, not an mlp`);
  const extra = loaded.extra as unknown as { args: Record<string, string>; state: RunState };
  const progress = join(dir, 'progress.jsonl');
  if (existsSync(progress)) {
    // keep the lines up to the checkpoint: later ones are replayed
    const kept = readFileSync(progress, 'utf8')
      .split('\n')
      .filter((l) => l && (JSON.parse(l).iteration ?? -1) < extra.state.next && !JSON.parse(l).resumed);
    writeFileSync(progress, kept.map((l) => l + '\n').join(''));
  }
  return { mlp: loaded.model, attachments: loaded.attachments, args: extra.args, state: extra.state };
}
