import { firstValueFrom, tap, toArray } from 'rxjs';
import { Agents } from './agents.js';
import { playGroups } from './operators/play-groups.js';
import { SolveArena } from './solve.js';
import { majorityLabel, voteOf } from './vote.js';
import { groupBy } from '../util/group.js';
import { SolverRole } from './solver.js';
import type { Episode, Task } from './types.js';
import type { LanguageModel } from '../models/generate.js';
import { BatchingServer, type GenerateReplicas } from '../serving/server.js';
import type { TaskFamily } from './task-family.js';
import type { Tokenizer } from '../tokenizer/types.js';

export interface EvalResult {
  tasks: number;
  /** greedy accuracy */
  pass1: number;
  /** accuracy of the majority answer of `samples` sampled answers (TTRL's maj@N); absent when samples is 0 */
  majN?: number;
  /**
   * the share of those sampled answers that are right (verl's `mean@N`, the sampled pass@1 that
   * DeepSeek-R1 reports): what RL at the sampling temperature moves first; absent when samples is 0
   */
  meanN?: number;
  samples: number;
  /** share of greedy answers that parse */
  validRate: number;
}

/** Replicas of the evaluated model in other threads (src/parallel) and its id among them: they share every batch. */
export interface Shared {
  replicas?: GenerateReplicas;
  id?: string;
  /** called as each episode ends (progress of a long evaluation) */
  onEpisode?: () => void;
}

/** How an evaluation samples: `stopStrings` end answers as in a run (see GenerateOptions). */
type Sampled = {
  samples: number;
  maxNewTokens: number;
  temperature?: number;
  seed?: number;
  stopStrings?: readonly string[];
} & Shared;

/** Plays the solve arena on `tasks` through a batching server and returns the episodes. */
export async function solveEpisodes(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  tasks: readonly Task[],
  group: number,
  sampling: { temperature: number; maxNewTokens: number; seed?: number; stopStrings?: readonly string[] } & Shared,
): Promise<Episode[]> {
  const { replicas, id, onEpisode, ...options } = sampling; // the options travel with every request; the replicas stay here
  const server = new BatchingServer(id ?? 'eval', model, options.seed ?? 0, undefined, replicas);
  const agents = new Agents(
    { solver: { role: new SolverRole((o) => family.parseAnswer(o)), model: 'eval', server } },
    tokenizer,
    options,
  );
  return firstValueFrom(
    playGroups(new SolveArena(), tasks, group, agents).pipe(
      tap(() => onEpisode?.()),
      toArray(),
    ),
  );
}

/**
 * pass@1 with greedy decoding and maj@N with N answers sampled at `temperature`, on
 * labeled tasks. Model output is parsed by the task family, never evaluated.
 */
export async function evaluateSolver(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  tasks: readonly Task[],
  o: Sampled,
): Promise<EvalResult> {
  if (tasks.length === 0) throw new Error('evaluate: no tasks');
  const greedy = await solveEpisodes(model, tokenizer, family, tasks, 1, {
    temperature: 0,
    maxNewTokens: o.maxNewTokens,
    stopStrings: o.stopStrings,
    replicas: o.replicas,
    id: o.id,
    onEpisode: o.onEpisode,
  });
  const right = greedy.filter((e) => family.verify(e.task, e.turns[0].text) && e.turns[0].action.valid).length;
  const result: EvalResult = {
    tasks: tasks.length,
    pass1: right / tasks.length,
    samples: o.samples,
    validRate: greedy.filter((e) => e.turns[0].action.valid).length / tasks.length,
  };
  if (o.samples > 0) Object.assign(result, await sampledAccuracy(model, tokenizer, family, tasks, o));
  return result;
}

/** maj@N and mean@N from one set of `samples` answers per task at `temperature`. */
async function sampledAccuracy(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  tasks: readonly Task[],
  o: Sampled,
): Promise<{ majN: number; meanN: number }> {
  const episodes = await solveEpisodes(model, tokenizer, family, tasks, o.samples, {
    temperature: o.temperature ?? 1,
    maxNewTokens: o.maxNewTokens,
    stopStrings: o.stopStrings,
    seed: o.seed,
    replicas: o.replicas,
    id: o.id,
    onEpisode: o.onEpisode,
  });
  let right = 0;
  for (const group of groupBy(episodes, (e) => e.group).values()) {
    const { label } = majorityLabel(group.map((e) => voteOf(e.turns[0])));
    if (label !== null && family.verify(group[0].task, label)) right++;
  }
  // each sampled answer counted as pass@1 counts the greedy one: valid and right
  const sampledRight = episodes.filter((e) => e.turns[0].action.valid && family.verify(e.task, e.turns[0].text)).length;
  return { majN: right / tasks.length, meanN: sampledRight / (tasks.length * o.samples) };
}
