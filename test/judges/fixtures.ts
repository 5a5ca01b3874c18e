/** Hand-built Episode fixtures for judge tests. */
import type { BatchRewards, Episode, Task, Turn } from '../../src/core/types.js';
import type { Judge } from '../../src/core/judge.js';

export interface TurnSpec {
  text?: string;
  valid?: boolean;
  /** parsed value; defaults to `text` when valid, null when invalid */
  value?: string | null;
  /** per-token self-certainty; its length sets the completion length (default 3 tokens of 1) */
  selfCertainty?: number[];
  role?: string;
}

/** One turn; a solver turn unless `role` says otherwise. */
export function turn(spec: TurnSpec = {}, index = 0): Turn {
  const { text = '', valid = true, role = 'solver' } = spec;
  const sc = spec.selfCertainty ?? [1, 1, 1];
  const value = spec.value !== undefined ? spec.value : valid ? text : null;
  return {
    index,
    role,
    model: 'm',
    prompt: [1, 2],
    completion: sc.map((_, i) => 10 + i),
    logProbs: sc.map(() => -1),
    entropy: sc.map(() => 0.5),
    selfCertainty: sc,
    text,
    action: valid ? { valid, value } : { valid, value, error: 'no answer' },
  };
}

export const TASK: Task = { id: 't0', family: 'arithmetic', prompt: '2+3=', answer: '5' };

/** One episode of group 'g' with the given turns. */
export function episode(turns: TurnSpec[], task: Task = TASK, i = 0): Episode {
  return { id: `ep${i}`, group: 'g', task, turns: turns.map((s, t) => turn(s, t)) };
}

/** A group of one-turn solver episodes. */
export function solverGroup(specs: TurnSpec[], task: Task = TASK): Episode[] {
  return specs.map((s, i) => episode([s], task, i));
}

/** Shorthand for a valid solver answer / an invalid one. */
export const ans = (value: string): TurnSpec => ({ text: `answer: ${value}`, value });
export const bad = (text = 'garbage'): TurnSpec => ({ text, valid: false });

/** A built-in judge's rewards, which it gives at once (a reward function's judge may answer later: await that one). */
export function scoredNow(judge: Judge, batch: readonly Episode[]): BatchRewards {
  const rewards = judge.score(batch);
  if (rewards instanceof Promise) throw new Error(`judge '${judge.name}' answered asynchronously`);
  return rewards;
}
