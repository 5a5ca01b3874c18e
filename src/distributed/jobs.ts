/**
 * Rollout jobs are data: the experiment's config (kinds by their registered names, never
 * code; its plugins stay out), the tasks, the group size, a seed and the model versions to
 * play with. A result is the episodes as plain JSON.
 */
import { z } from 'zod';
import type { Episode, Task } from '../core/types.js';

export const JOB_NAME = 'rollout';

/** The queue of a run: one per run, so two runs never share jobs. */
export const queueName = (key: string) => `coevolve-${key}`;

export interface RolloutJob {
  /** the learner session that asked: a resumed learner starts a new one and ignores the old one's jobs */
  session: string;
  iteration: number;
  /** the job's place in its iteration (its episodes come back in this order) */
  index: number;
  /** the experiment config, as JSON, without plugins */
  config: Record<string, unknown>;
  tasks: Task[];
  /** the episodes to play: member g of the group of tasks[t], as [t, g] (a group may span jobs) */
  members: Array<[number, number]>;
  seed: number;
  /** the weights version to play each model with */
  versions: Record<string, number>;
  /** where the versions are: a Redis key prefix, or a directory */
  weights: { prefix: string } | { dir: string };
  /** the task buffer's recent prompts (a proposer's duplicate is invalid) */
  recent: string[];
}

export interface RolloutResult {
  episodes: Episode[];
  versions: Record<string, number>;
  /** tokens generated, for throughput */
  tokens: number;
  seconds: number;
}

const TaskSchema = z
  .object({ id: z.string(), family: z.string(), prompt: z.string(), answer: z.string().optional() })
  .passthrough();

export const RolloutJobSchema = z.strictObject({
  session: z.string().min(1),
  iteration: z.number().int().positive(),
  index: z.number().int().nonnegative(),
  config: z.record(z.string(), z.unknown()),
  tasks: z.array(TaskSchema),
  members: z.array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])),
  seed: z.number().int(),
  versions: z.record(z.string(), z.number().int().nonnegative()),
  weights: z.union([z.strictObject({ prefix: z.string().min(1) }), z.strictObject({ dir: z.string().min(1) })]),
  recent: z.array(z.string()),
});

/** The job id: deterministic, so the same job added twice (a learner that re-adds after Redis lost it) is one job. */
export const jobId = (job: Pick<RolloutJob, 'session' | 'iteration' | 'index'>) =>
  `${job.session}.${job.iteration}.${job.index}`;
