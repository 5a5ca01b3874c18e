/** The loop's helpers: each phase's plumbing, so runLoop reads top to bottom. */
import type { Arena } from '../core/arena.js';
import type { TaskBuffer } from './task-buffer.js';
import type { ExperimentConfig } from '../config/schema.js';
import type { Episode, Task } from '../core/types.js';
import type { KlController } from '../rl/kl-reward.js';
import type { ModelStep, TrainSample } from '../rl/trainer.js';
import type { LanguageModel } from '../models/generate.js';
import { BatchingServer } from '../serving/server.js';
import type { TaskFamily } from '../core/task-family.js';
import { Rng } from '../util/rng.js';
import type { RoleTraining, ScoredTurn } from './rewards.js';

/**
 * The iteration's tasks: `perIteration` distinct training tasks, or, when a role writes the
 * tasks, as many blank seeds for it to write on; plus `buffer.replay` tasks from the buffer;
 * then, when the arena keeps something across iterations, what its `carry` makes of them.
 */
export function iterationTasks(
  c: ExperimentConfig,
  arena: Arena,
  train: readonly Task[],
  buffer: TaskBuffer,
  it: number,
  carried?: unknown,
): Task[] {
  const fresh = arena.seedsTasks
    ? Array.from({ length: c.tasks.perIteration }, (_, k) => ({
        id: `seed-${it}-${k}`,
        family: c.tasks.family,
        prompt: '',
      }))
    : pickTasks(train, c.tasks.perIteration, hashSeed(c.seed, it, 'tasks'));
  const replay = buffer
    .sample(c.buffer.replay, hashSeed(c.seed, it, 'replay'))
    .map((b, k) => ({ ...b.task, id: `replay-${it}-${k}` }));
  const tasks = [...fresh, ...replay];
  return arena.carry ? arena.carry.tasks(carried, tasks, it) : tasks;
}

/** Adds the tasks roles wrote this iteration to the buffer, with p = the share of attempts that verify. */
export function recordWrittenTasks(
  episodes: readonly Episode[],
  family: TaskFamily<unknown>,
  buffer: TaskBuffer,
  it: number,
): void {
  for (const e of episodes) {
    const filed = e.turns.filter((t) => t.task && t.task.id !== e.task.id && t.task.answer !== undefined);
    if (filed.length === 0 || e.task.prompt !== '') continue; // a seed (blank prompt) is what a role wrote on
    // the first role filed on the written task attempted it; other roles' turns (verdicts on its attempts) are not attempts
    const attempts = filed.filter((t) => t.role === filed[0].role);
    const task = attempts[0].task!;
    const p = attempts.filter((t) => t.action.valid && family.verify(task, t.text)).length / attempts.length;
    buffer.add({
      task: { id: task.id, family: task.family, prompt: task.prompt, answer: task.answer },
      p,
      iteration: it,
    });
  }
}

/** Each role's training settings, from its config and the trainer's defaults. */
export function roleTraining(
  c: ExperimentConfig,
  controllers: Readonly<Record<string, KlController>>,
): Record<string, RoleTraining> {
  return Object.fromEntries(
    Object.entries(c.roles).map(([id, r]) => {
      const t: RoleTraining = { advantage: r.advantage ?? c.trainer.advantage };
      if (r.klCoef !== undefined) t.klCoef = r.klCoef;
      if (r.lossWeight !== undefined) t.lossWeight = r.lossWeight;
      if (r.klReward) t.klReward = { ctrl: controllers[id], kind: r.klReward.kind };
      return [id, t];
    }),
  );
}

/** Reference log-probs for every scored turn whose role has a KL term (in the loss or the reward). */
export async function addReferenceLogProbs(
  c: ExperimentConfig,
  scored: ScoredTurn[],
  references: Record<string, LanguageModel>,
  temperature: number,
): Promise<void> {
  const needs = (role: string) =>
    (c.roles[role]?.klCoef ?? c.trainer.klCoef ?? 0) > 0 || c.roles[role]?.klReward !== undefined;
  const servers = Object.fromEntries(
    Object.entries(references).map(([id, m]) => [id, new BatchingServer(`${id}-ref`, m)]),
  );
  await Promise.all(
    scored.map(async (s) => {
      const turn = s.episode.turns[s.turn];
      if (!needs(turn.role) || !servers[turn.model]) return;
      s.refLogProbs = await servers[turn.model].logProbs(
        { prompt: turn.prompt, completion: turn.completion },
        temperature,
      );
    }),
  );
}

/**
 * The iteration's samples for one optimizer pass, shuffled (seeded) and cut into `parts`
 * near-equal mini-batches, one optimizer step each: verl's `ppo_mini_batch_size` (there a
 * size in prompts, here a count, so a batch thinned by dropEqualGroups still gives `parts`
 * steps). Advantages are computed on the whole batch before the cut, as in verl; each part's
 * loss is aggregated over its own tokens. One part keeps the batch as it is.
 */
export function miniBatches<T>(samples: readonly T[], parts: number, seed: number): T[][] {
  if (parts <= 1) return [[...samples]];
  const rng = new Rng(seed);
  const pool = [...samples];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const n = Math.min(parts, pool.length);
  return Array.from({ length: n }, (_, k) =>
    pool.slice(Math.floor((k * pool.length) / n), Math.floor(((k + 1) * pool.length) / n)),
  );
}

/** Losses, KL and throughput of the iteration's update (`passes`: how many times each sample was trained on). */
export function stepMetrics(
  steps: Record<string, ModelStep>[],
  servers: Record<string, { stats: { generatedTokens: number } }>,
  samples: readonly TrainSample[],
  tRollout: number,
  tTrain: number,
  elsewhere: number,
  passes: number,
): Record<string, number> {
  const m: Record<string, number> = {};
  for (const [id, r] of Object.entries(steps[steps.length - 1] ?? {})) {
    Object.assign(m, {
      [`losses/${id}/loss`]: r.loss,
      [`losses/${id}/clipfrac`]: r.clipfrac,
      [`losses/${id}/grad_norm`]: r.gradNorm,
      [`losses/${id}/skipped`]: r.skipped ? 1 : 0,
    });
    if (r.kl !== undefined) m[`kl/${id}`] = r.kl;
  }
  const generated = Object.values(servers).reduce((n, s) => n + s.stats.generatedTokens, elsewhere); // `elsewhere`: tokens rollout workers generated
  const trained = samples.reduce((n, s) => n + s.prompt.length + s.completion.length, 0) * passes;
  return {
    ...m,
    'time/rollout_s': tRollout,
    'time/train_s': tTrain,
    'time/rollout_tokens_per_s': generated / tRollout,
    'time/train_tokens_per_s': tTrain > 0 ? trained / tTrain : 0,
  };
}

/** n distinct tasks (a partial Fisher-Yates shuffle), so no two groups of one iteration share a task. */
export function pickTasks(train: readonly Task[], n: number, seed: number): Task[] {
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
export function hashSeed(seed: number, it: number, what: string): number {
  let h = (seed * 2654435761 + it * 40503) >>> 0;
  for (const ch of what) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h;
}
