import * as tf from '@tensorflow/tfjs';
import { mkdirSync } from 'node:fs';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents, playGroups } from '../../arenas/index.js';
import { describeBackend, initBackend } from '../backend/index.js';
import type { ExperimentConfig } from '../config/schema.js';
import type { TinyLM } from '../models/tinylm.js';
import type { Task } from '../core/types.js';
import { createProgress } from '../progress/index.js';
import { encodeOptimizerState, restoreOptimizerState } from '../rl/optimizer-state.js';
import { refSyncDue, syncTargetModel } from '../rl/ref-sync.js';
import { lrMultiplier } from '../rl/schedule.js';
import { JointTrainer, type TrainSample } from '../rl/trainer.js';
import { BatchingServer } from '../serving/server.js';
import type { RunStore } from '../store/run.js';
import { Rng } from '../util/rng.js';
import { evaluateSolver } from './evaluate.js';
import { loadModels, saveModels, saveReferences } from './models.js';
import { createContainer, Resolver } from './registry.js';
import { rolloutMetrics, scoreEpisodes, toSamples } from './rewards.js';
import { preflight, type Checked } from './preflight.js';

export interface LoopOptions {
  log?: (line: string) => void;
  stream?: NodeJS.WriteStream;
  /** the task sets as preflight checked them, when the caller already did (before making the run folder) */
  checked?: Checked;
  /** resume with a fresh optimizer when the checkpoint's optimizer state is missing or unwanted */
  freshOptimizer?: boolean;
}

/**
 * The experiment, top to bottom: resolve every name (before any work), load models, then
 * per iteration: pick tasks, play groups of episodes through the batching servers, judge,
 * compute advantages, one joint update, store episodes and metrics, checkpoint, evaluate.
 * Resumes from the store's last checkpoint: later iterations are dropped and replayed, but
 * only once the checkpoint has loaded whole, so a bad checkpoint changes nothing.
 */
export async function runLoop(c: ExperimentConfig, store: RunStore, o: LoopOptions = {}): Promise<void> {
  const log = o.log ?? ((l: string) => console.error(l));
  const plan = createContainer().get(Resolver).plan(c);
  const { train, evalSet } = o.checked ?? (await preflight(c, plan, log));
  log(describeBackend(await initBackend(c.backend)));
  const resumeDir = store.lastCheckpointDir() ?? undefined;
  const { models, references, tokenizer, attachments } = await loadModels(c, resumeDir, { freshOptimizer: o.freshOptimizer });
  // Old log-probs were taken at the sampling temperature, so the update scores at it too.
  const sampledAt = c.arena.temperature > 0 ? c.arena.temperature : 1;
  const temperature = c.trainer.temperature ?? sampledAt;
  const trainer = new JointTrainer(models, { ...c.trainer, temperature });
  for (const id of resumeDir ? Object.keys(models) : []) {
    if (o.freshOptimizer) log(`models.${id}: starting a fresh optimizer (--fresh-optimizer)`);
    else await restoreOptimizerState(`${resumeDir}/${id}`, attachments[id] ?? {}, trainer.optimizer(id));
  }
  const start = await store.resume();
  if (start > 0) log(`resuming after iteration ${start} from ${resumeDir}`);
  const sampling = { maxNewTokens: c.arena.maxNewTokens, temperature: c.arena.temperature, topK: c.arena.topK, topP: c.arena.topP };
  const progress = createProgress(c.iterations, { stream: o.stream, label: c.name });
  // Evaluation scores the model that plays the (first) solver role, if there is one.
  const solverRole = Object.values(c.roles).find((r) => r.kind === 'solver');
  const solverModel = solverRole ? models[solverRole.model] : undefined;
  // maj@N is costly: it is measured at the start, the end and wherever the reference moves.
  const evaluate = async (it: number, withMaj: boolean) => {
    if (!solverModel || evalSet.length === 0) return {};
    const r = await evaluateSolver(solverModel, tokenizer, plan.family, evalSet, { samples: withMaj ? c.eval.samples : 0, temperature: c.eval.temperature ?? sampledAt, maxNewTokens: c.arena.maxNewTokens, seed: c.seed + it });
    return { 'eval/pass1': r.pass1, ...(r.majN !== undefined ? { [`eval/maj${r.samples}`]: r.majN } : {}) };
  };
  if (!store.readMetrics().some((r) => r.iteration === 0)) store.appendMetrics({ iteration: 0, ...(await evaluate(0, true)) });
  for (let it = start + 1; it <= c.iterations; it++) {
    const t0 = performance.now();
    const servers = Object.fromEntries(Object.entries(models).map(([id, m]) => [id, new BatchingServer(id, m, hashSeed(c.seed, it, id))]));
    const agents = new Agents(Object.fromEntries(Object.entries(c.roles).map(([id, r]) => [id, { role: plan.roles[id], model: r.model, server: servers[r.model] }])), tokenizer, sampling);
    const tasks = pickTasks(train, c.tasks.perIteration, hashSeed(c.seed, it, 'tasks'));
    const episodes = await firstValueFrom(playGroups(plan.arena, tasks, c.arena.groupSize, agents).pipe(toArray()));
    const tRollout = (performance.now() - t0) / 1000;
    const scored = scoreEpisodes(plan, episodes, c.arena.trainPerGroup);
    const samples = toSamples(scored, c.trainer);
    if (c.trainer.klCoef && c.trainer.klCoef > 0) await addReferenceLogProbs(samples, references, temperature);
    const lr = trainer.config.lr * lrMultiplier(c.trainer.lrSchedule, it - 1, c.iterations);
    trainer.setLearningRate(lr);
    const t1 = performance.now();
    const steps = samples.length ? Array.from({ length: c.trainer.ppoEpochs }, () => trainer.step(samples)) : [];
    const tTrain = (performance.now() - t1) / 1000;
    const metrics: Record<string, number> = { ...rolloutMetrics(plan, episodes, scored), samples: samples.length, lr };
    const synced = refSyncDue(c.trainer.refSync, it);
    if (synced) {
      for (const [id, ref] of Object.entries(references)) syncTargetModel(ref.weights, models[id].weights, c.trainer.refSync!.mixupAlpha);
      metrics.ref_synced = 1;
    }
    for (const [id, r] of Object.entries(steps[steps.length - 1] ?? {})) {
      Object.assign(metrics, { [`losses/${id}/loss`]: r.loss, [`losses/${id}/clipfrac`]: r.clipfrac, [`losses/${id}/grad_norm`]: r.gradNorm, [`losses/${id}/skipped`]: r.skipped ? 1 : 0 });
      if (r.kl !== undefined) metrics[`kl/${id}`] = r.kl;
    }
    const generated = Object.values(servers).reduce((n, s) => n + s.stats.generatedTokens, 0);
    const trained = samples.reduce((n, s) => n + s.prompt.length + s.completion.length, 0) * steps.length;
    Object.assign(metrics, { 'time/rollout_tokens_per_s': generated / tRollout, 'time/train_tokens_per_s': tTrain > 0 ? trained / tTrain : 0 });
    if (it % c.eval.every === 0 || it === c.iterations || synced) Object.assign(metrics, await evaluate(it, it === c.iterations || synced));
    metrics['time/iteration_s'] = (performance.now() - t0) / 1000;
    store.appendEpisodes(it, episodes);
    store.appendMetrics({ iteration: it, ...finite(metrics) });
    if (it % c.checkpointEvery === 0 || it === c.iterations) {
      const dir = store.checkpointDir(it);
      mkdirSync(dir, { recursive: true });
      const optimizers = Object.fromEntries(await Promise.all(Object.keys(models).map(async (id) => [id, await encodeOptimizerState(trainer.optimizer(id))] as const)));
      await saveModels(dir, models, tokenizer, { iteration: it }, optimizers);
      // A synced reference is no longer the starting checkpoint, so it is saved too.
      if (c.trainer.refSync) await saveReferences(dir, references, tokenizer, { iteration: it });
      await store.recordCheckpoint(it, dir);
    }
    progress.tick(it, pickShown(metrics));
  }
  progress.done();
  await store.setStatus('done');
  for (const m of [...Object.values(models), ...Object.values(references)]) m.dispose();
  trainer.dispose();
  log(`done: ${store.dir} (tensors alive: ${tf.memory().numTensors})`);
}

async function addReferenceLogProbs(samples: TrainSample[], references: Record<string, TinyLM>, temperature: number): Promise<void> {
  const servers = Object.fromEntries(Object.entries(references).map(([id, m]) => [id, new BatchingServer(`${id}-ref`, m)]));
  const refs = await Promise.all(samples.map((s) => servers[s.model]?.logProbs({ prompt: s.prompt, completion: s.completion }, temperature)));
  samples.forEach((s, i) => { if (refs[i]) s.refLogProbs = refs[i]; });
}

/** n distinct tasks (a partial Fisher-Yates shuffle), so no two groups of one iteration share a task. */
function pickTasks(train: readonly Task[], n: number, seed: number): Task[] {
  const rng = new Rng(seed);
  const pool = [...train];
  const k = Math.min(n, pool.length);
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(pool.length - i);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k);
}

/** A seed per (run seed, iteration, purpose), so a replayed iteration draws the same numbers. */
function hashSeed(seed: number, it: number, what: string): number {
  let h = (seed * 2654435761 + it * 40503) >>> 0;
  for (const ch of what) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h;
}

function pickShown(m: Record<string, number>): Record<string, number> {
  const keys = Object.keys(m).filter((k) => k.startsWith('reward/') || k === 'accuracy/train' || k.startsWith('eval/'));
  return Object.fromEntries(keys.map((k) => [k.replace(/^(reward|accuracy|eval)\//, ''), m[k]]));
}

/** Metrics without the undefined ones (a mean over nothing), so every stored number is real. */
function finite(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => Number.isFinite(v)));
}
