import type { ArenaContext } from '../src/core/arena.js';
import type { Turn } from '../src/core/types.js';
import { readFact, UNKNOWN } from '../src/tasks/dialogue.js';
import { AnswerRole, MemoryManagerRole } from '../roles/memory.js';
import type { Observation } from '../src/core/role.js';

/**
 * Hand-written policies for dialogue memory, as model outputs would be: the ceiling a learned
 * manager and answer agent can reach with the arena's retrieval, and fixtures for tests.
 */

/** The manager a rule would be: ADD a new fact (NOOP when full), UPDATE a known slot, DELETE a removed one, NOOP small talk. */
export function ruleManager(shown: readonly string[], turn: string, full: boolean): string {
  const fact = readFact(turn);
  if (!fact) return 'NOOP';
  const i = shown.findIndex((s) => readFact(s)?.slot === fact.slot);
  if (fact.value === null) return i >= 0 ? `DELETE ${i}` : 'NOOP';
  if (i >= 0) return `UPDATE ${i} ${turn}`;
  return full ? 'NOOP' : `ADD ${turn}`;
}

/** The answer agent a rule would be: the first shown entry on the question's slot (retrieval puts the latest first among equals), or unknown. */
export function ruleReader(shown: readonly string[], question: string): string {
  const slot = question.replace(/\?$/, '');
  const i = shown.findIndex((s) => readFact(s)?.slot === slot);
  if (i < 0) return `-:${UNKNOWN}`;
  return `${i}:${readFact(shown[i])!.value ?? UNKNOWN}`;
}

const roles = { memory: new MemoryManagerRole(), answer: new AnswerRole() };

/** An arena context whose `memory` and `answer` roles act by rule: the text the rules write, parsed by the real roles. */
export const ruleContext: ArenaContext = {
  async act(role: string, o: Observation, options = {}): Promise<Turn> {
    const shown = (o.memory as string[] | undefined) ?? [];
    const text =
      role === 'memory' ? ruleManager(shown, String(o.fact), o.full === true) : ruleReader(shown, String(o.question));
    const action = roles[role as 'memory' | 'answer'].parse(text, o);
    return {
      index: 0,
      role,
      model: 'rule',
      prompt: [],
      completion: [],
      logProbs: [],
      entropy: [],
      selfCertainty: [],
      text,
      action,
      ...(options.task ? { task: options.task } : {}),
      ...(options.compare ? { compare: options.compare } : {}),
    };
  },
};
