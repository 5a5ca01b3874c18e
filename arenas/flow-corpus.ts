/**
 * A planner base's corpus (`flow:` in a pretrain config): the flow arena's planner format taught
 * with random choices (format only, as the memory base; `right` of them right instead): shown the
 * numbered memory, two entry indices drawn at random, with replacement, from those it holds. So it
 * names entries and knows nothing of which pair is the next one: that is left to RL from the
 * flow's outcome. The memories come from playing the corpus tasks through the flow with that
 * random planner.
 */
import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { entryArgs, FlowArena, rightSteps } from './flow.js';
import { sumOperands } from '../src/tasks/scratchpad.js';
import type { ArenaContext } from '../src/core/arena.js';
import type { Observation } from '../src/core/role.js';
import type { Task, Turn } from '../src/core/types.js';
import { generate } from '../src/models/generate.js';
import type { TinyLM } from '../src/models/tinylm.js';
import type { PolicyInput } from '../src/models/types.js';
import { arithmetic } from '../src/tasks/arithmetic.js';
import type { CharTokenizer } from '../src/tokenizer/index.js';
import type { Rng } from '../src/util/rng.js';
import { PlannerRole } from '../roles/planner.js';

export const FlowCorpusSchema = z.strictObject({
  /** the flow's planner turns at most, as the arena that will train the base has them */
  maxTurns: z.number().int().positive().default(3),
  /** the share of turns taught a right step (two entries not used yet) instead of a random one: a partly right planner */
  right: z.number().min(0).max(1).default(0),
});
export type FlowCorpus = z.output<typeof FlowCorpusSchema>;

/** One planner turn: what it was shown and the random step taught for it. */
export interface FlowShowing {
  o: Observation;
  text: string;
}

const planner = new PlannerRole();

/** A random step: two of the memory's entry indices, drawn with replacement. */
export function randomStep(o: Observation, rng: Rng): string {
  const n = (o.memory as string[]).length;
  return `${rng.int(n)}+${rng.int(n)}`;
}

/** A right step, when the memory's steps so far were right: two different entries no step has used yet; else a random one. */
export function rightStep(o: Observation, rng: Rng): string {
  const memory = o.memory as string[];
  const n = sumOperands(o.task.prompt)!.length;
  if (!rightSteps(memory, n).every(Boolean)) return randomStep(o, rng);
  const used = new Set(memory.flatMap(entryArgs));
  const pool = memory.map((_, i) => i).filter((i) => !used.has(i));
  const i = rng.int(pool.length);
  const j = (i + 1 + rng.int(pool.length - 1)) % pool.length;
  return `${pool[i]}+${pool[j]}`;
}

/** Every planner turn of `tasks` played through the flow by a planner that steps right `o.right` of the time, else at random. */
export async function flowShowings(tasks: readonly Task[], o: FlowCorpus, rng: Rng): Promise<FlowShowing[]> {
  const seen: FlowShowing[] = [];
  const random: ArenaContext = {
    act(role, obs) {
      const text = o.right > 0 && rng.next() < o.right ? rightStep(obs, rng) : randomStep(obs, rng); // right: 0 draws as before it existed
      seen.push({ o: obs, text });
      const empty = { prompt: [], completion: [], logProbs: [], entropy: [], selfCertainty: [] };
      const turn: Turn = { index: 0, role, model: 'random', ...empty, text, action: planner.parse(text) };
      return Promise.resolve(turn);
    },
  };
  const arena = new FlowArena({ maxTurns: o.maxTurns }, arithmetic as never);
  for (const task of tasks) await firstValueFrom(arena.play(task, random).pipe(toArray()));
  return seen;
}

const prompt = (tokenizer: CharTokenizer, s: FlowShowing) => tokenizer.prompt(planner.render(s.o), planner.token);

/** The supervised examples of showings: each prompt and its random step. */
export function flowExamples(tokenizer: CharTokenizer, seen: readonly FlowShowing[]): PolicyInput[] {
  return seen.map((s) => ({ prompt: prompt(tokenizer, s), completion: [...tokenizer.encode(s.text), tokenizer.eos] }));
}

/** The share of sampled outputs (temperature 1) that end, parse, and name two entries the memory holds: the format is learned near 1. */
export function flowValidRate(
  model: TinyLM,
  tokenizer: CharTokenizer,
  set: readonly FlowShowing[],
  seed: number,
): number {
  const outs = generate(
    model,
    set.map((s) => prompt(tokenizer, s)),
    { maxNewTokens: 6, temperature: 1, seed, eos: tokenizer.eos },
  );
  const ok = set.filter((s, i) => {
    const g = outs[i].tokens;
    const action = planner.parse(tokenizer.decode(g.slice(0, -1)));
    const held = (s.o.memory as string[]).length;
    return g.at(-1) === tokenizer.eos && action.valid && action.value!.split('+').every((x) => Number(x) < held);
  });
  return set.length ? +(ok.length / set.length).toFixed(3) : 0;
}
