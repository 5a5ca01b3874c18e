import { firstValueFrom, toArray } from 'rxjs';
import { Agents, playGroups } from '../../arenas/index.js';
import { SolveArena } from '../../arenas/solve.js';
import { majorityLabel, voteOf } from '../../judges/majority.js';
import { groupBy } from '../util/group.js';
import { SolverRole } from '../../roles/solver.js';
import type { Episode, Task } from '../core/types.js';
import type { TinyLM } from '../models/tinylm.js';
import { BatchingServer } from '../serving/server.js';
import type { TaskFamily } from '../tasks/types.js';
import type { CharTokenizer } from '../tokenizer/index.js';

export interface EvalResult {
  tasks: number;
  /** greedy accuracy */
  pass1: number;
  /** accuracy of the majority answer of `samples` sampled answers (TTRL's maj@N); absent when samples is 0 */
  majN?: number;
  samples: number;
  /** share of greedy answers that parse */
  validRate: number;
}

/** Plays the solve arena on `tasks` through a batching server and returns the episodes. */
export async function solveEpisodes(model: TinyLM, tokenizer: CharTokenizer, family: TaskFamily<unknown>, tasks: readonly Task[], group: number, sampling: { temperature: number; maxNewTokens: number; seed?: number }): Promise<Episode[]> {
  const server = new BatchingServer('eval', model, sampling.seed ?? 0);
  const agents = new Agents({ solver: { role: new SolverRole((o) => family.parseAnswer(o)), model: 'eval', server } }, tokenizer, sampling);
  return firstValueFrom(playGroups(new SolveArena(), tasks, group, agents).pipe(toArray()));
}

/**
 * pass@1 with greedy decoding and maj@N with N answers sampled at `temperature`, on
 * labeled tasks. Model output is parsed by the task family, never evaluated.
 */
export async function evaluateSolver(model: TinyLM, tokenizer: CharTokenizer, family: TaskFamily<unknown>, tasks: readonly Task[], o: { samples: number; maxNewTokens: number; temperature?: number; seed?: number }): Promise<EvalResult> {
  if (tasks.length === 0) throw new Error('evaluate: no tasks');
  const greedy = await solveEpisodes(model, tokenizer, family, tasks, 1, { temperature: 0, maxNewTokens: o.maxNewTokens });
  const right = greedy.filter((e) => family.verify(e.task, e.turns[0].text) && e.turns[0].action.valid).length;
  const result: EvalResult = { tasks: tasks.length, pass1: right / tasks.length, samples: o.samples, validRate: greedy.filter((e) => e.turns[0].action.valid).length / tasks.length };
  if (o.samples > 0) result.majN = await majorityAccuracy(model, tokenizer, family, tasks, o);
  return result;
}

async function majorityAccuracy(model: TinyLM, tokenizer: CharTokenizer, family: TaskFamily<unknown>, tasks: readonly Task[], o: { samples: number; maxNewTokens: number; temperature?: number; seed?: number }): Promise<number> {
  const episodes = await solveEpisodes(model, tokenizer, family, tasks, o.samples, { temperature: o.temperature ?? 1, maxNewTokens: o.maxNewTokens, seed: o.seed });
  let right = 0;
  for (const group of groupBy(episodes, (e) => e.group).values()) {
    const { label } = majorityLabel(group.map((e) => voteOf(e.turns[0])));
    if (label !== null && family.verify(group[0].task, label)) right++;
  }
  return right / tasks.length;
}
