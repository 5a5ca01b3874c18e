/**
 * A memory base's corpus (`memory:` in a pretrain config): the two formats of the memory arena
 * taught with random choices, not right ones (format only, as the judge and critic bases):
 * - as the manager, a random valid operation on what it is shown: NOOP, ADD the turn, UPDATE a
 *   random shown entry with the turn, or DELETE one;
 * - as the answer agent, a random shown entry and its last word, or `-:unknown`.
 * So it copies the turn and indexes entries right, and knows nothing of which operation or entry
 * is the right one: that is left to RL from the answers' outcome. The observations come from
 * playing the corpus dialogues, the bank edited half by the rule manager and half by random
 * operations, so they cover banks a learner will meet.
 *
 * With `reads` that share of the answer agent's examples are answered as the rule reader
 * answers (the entry on the question's slot): a prior for RL to sharpen, as the observer base's
 * `marked` is (measured: from random answers alone the real-architecture answer agent fell to
 * always `-:unknown`, docs/hf-experiments.md). With `manages` that share of the manager's
 * examples are the rule manager's operation (ADD a new slot, UPDATE a known one, DELETE a
 * removed one, NOOP small talk), the same kind of prior for the manager (measured: from random
 * operations the real-architecture manager settled on UPDATE, whatever the turn).
 */
import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { MemoryDialogueArena } from './memory-dialogue.js';
import type { ArenaContext } from '../src/core/arena.js';
import { ruleContext, ruleManager, ruleReader } from './memory-rules.js';
import { AnswerRole, MemoryManagerRole } from '../roles/memory.js';
import type { Observation } from '../src/core/role.js';
import type { Task } from '../src/core/types.js';
import { rolePrompt } from '../src/core/prompt.js';
import { generate, type LanguageModel } from '../src/models/generate.js';
import type { PolicyInput } from '../src/models/types.js';
import { dialogue, UNKNOWN } from '../src/tasks/dialogue.js';
import type { Tokenizer } from '../src/tokenizer/types.js';
import type { Rng } from '../src/util/rng.js';

export const MemoryCorpusSchema = z.strictObject({
  /** the bank's size and the entries retrieved, as the arena that will train the base has them */
  maxEntries: z.number().int().positive().default(8),
  retrieve: z.number().int().positive().default(3),
  /** the share of the answer agent's examples answered by reading the bank (ruleReader), the rest at random */
  reads: z.number().min(0).max(1).default(0),
  /** the share of the manager's examples answered by the rule manager (ruleManager), the rest at random */
  manages: z.number().min(0).max(1).default(0),
});
export type MemoryCorpus = z.output<typeof MemoryCorpusSchema>;

/** One turn a role was asked, with the random answer taught for it. */
export interface MemoryShowing {
  role: 'memory' | 'answer';
  o: Observation;
  text: string;
}

const roles = { memory: new MemoryManagerRole(), answer: new AnswerRole() };

/** What the rules write for a role shown `o`: the rule manager's operation, or the rule reader's answer. */
export function ruleText(role: 'memory' | 'answer', o: Observation): string {
  const shown = o.memory as string[];
  return role === 'memory'
    ? ruleManager(shown, String(o.fact), o.full === true)
    : ruleReader(shown, String(o.question));
}

/** A random valid manager operation on what it is shown. */
function randomOp(o: Observation, rng: Rng): string {
  const shown = o.memory as string[];
  const choices = [
    'NOOP',
    ...(o.full ? [] : [`ADD ${o.fact}`]),
    ...shown.map((_, i) => `UPDATE ${i} ${o.fact}`),
    ...shown.map((_, i) => `DELETE ${i}`),
  ];
  return choices[rng.int(choices.length)];
}

/** A random selection among the entries shown, and that entry's last word, or none and unknown. */
function randomAnswer(o: Observation, rng: Rng): string {
  const shown = o.memory as string[];
  const i = rng.int(shown.length + 1) - 1;
  if (i < 0) return `-:${UNKNOWN}`;
  const last = shown[i].split(' ').pop()!;
  return `${i}:${last === '-' ? UNKNOWN : last}`;
}

/** Every turn both roles are asked while `tasks` (dialogues) are played, each with a random answer drawn from `rng`. */
export async function memoryShowings(tasks: readonly Task[], o: MemoryCorpus, rng: Rng): Promise<MemoryShowing[]> {
  const seen: MemoryShowing[] = [];
  const collect: ArenaContext = {
    async act(role, obs, options) {
      const r = role as 'memory' | 'answer';
      // the rng is drawn only when a share is set, so corpora without one stay as they were
      const read = r === 'answer' && o.reads > 0 && rng.next() < o.reads;
      const rule = r === 'memory' && o.manages > 0 && rng.next() < o.manages;
      const text = read || rule ? ruleText(r, obs) : r === 'memory' ? randomOp(obs, rng) : randomAnswer(obs, rng);
      seen.push({ role: r, o: obs, text });
      if (r === 'memory' && rng.next() < 0.5) {
        const turn = await ruleContext.act(role, obs, options);
        const text = randomOp(obs, rng);
        return { ...turn, text, action: roles.memory.parse(text, obs) };
      }
      return ruleContext.act(role, obs, options);
    },
  };
  const arena = new MemoryDialogueArena(
    { maxEntries: o.maxEntries, retrieve: o.retrieve, rerollouts: 2, probes: 2 },
    dialogue as never,
  );
  for (const task of tasks) await firstValueFrom(arena.play(task, collect).pipe(toArray()));
  return seen;
}

/** The prompt a role is asked a showing in (a chat template's turns when the tokenizer has one), as a run asks it. */
const prompt = (tokenizer: Tokenizer, s: MemoryShowing) =>
  rolePrompt(tokenizer, roles[s.role], roles[s.role].render(s.o));

/** The supervised examples of showings: each prompt and its random answer. */
export function memoryExamples(tokenizer: Tokenizer, seen: readonly MemoryShowing[]): PolicyInput[] {
  return seen.map((s) => ({ prompt: prompt(tokenizer, s), completion: [...tokenizer.encode(s.text), tokenizer.eos] }));
}

/** What a base wrote on held-out showings, per role: the share that parse, and the share the rules would write (ruleManager's operation, ruleReader's answer). */
export interface MemoryRates {
  manager: number;
  answer: number;
  managerRule: number;
  answerRule: number;
}

/** The rates of outputs written on `set` (each ended or cut off), one per showing. */
export function memoryRates(
  set: readonly MemoryShowing[],
  outs: ReadonlyArray<{ text: string; stopped: boolean }>,
): MemoryRates {
  const share = (role: string, ok: (s: MemoryShowing, text: string) => boolean) => {
    const mine = set.map((s, i) => ({ s, out: outs[i] })).filter((x) => x.s.role === role && x.out.stopped);
    const all = set.filter((s) => s.role === role).length;
    return all ? +(mine.filter((x) => ok(x.s, x.out.text)).length / all).toFixed(3) : 0;
  };
  const valid = (s: MemoryShowing, text: string) => roles[s.role].parse(text, s.o).valid;
  const ruled = (s: MemoryShowing, text: string) => text === ruleText(s.role, s.o);
  return {
    manager: share('memory', valid),
    answer: share('answer', valid),
    managerRule: share('memory', ruled),
    answerRule: share('answer', ruled),
  };
}

/**
 * A memory base's rates on `set`, sampled at temperature 1: the format is learned when both
 * roles parse at about 1; the rule shares say how far a prior (`manages`, `reads`) took hold.
 */
export function memoryValidRates(
  model: LanguageModel,
  tokenizer: Tokenizer,
  set: readonly MemoryShowing[],
  seed: number,
): MemoryRates {
  const outs = generate(
    model,
    set.map((s) => prompt(tokenizer, s)),
    { maxNewTokens: 26, temperature: 1, seed, eos: tokenizer.eos, stop: tokenizer.stops },
  );
  return memoryRates(
    set,
    outs.map((g) => ({ text: tokenizer.decode(g.tokens.slice(0, -1)), stopped: g.stopped })),
  );
}
