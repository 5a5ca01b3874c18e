/**
 * The five-roles arena's bank: the tasks the memory manager keeps across iterations because
 * the solver got them wrong, replayed to the solver beside the proposer's new tasks.
 */
import type { Episode, Task } from '../../src/core/types.js';
import type { ArenaCarry } from '../../src/core/arena.js';

/** A manager's operation, as the episode's info records it: positions already read as the prompts shown. */
export interface BankOp {
  op: 'ADD' | 'UPDATE' | 'DELETE' | 'NOOP';
  /** the prompt of the entry an UPDATE or DELETE named */
  entry?: string;
  /** the episode's task: what an ADD or UPDATE keeps */
  task: Task;
}

interface Kept {
  entries: Task[];
}

/** The prompts of the bank an episode was shown (its seed's `fields.bank`). */
export function shownBank(seed: Task): string[] {
  const bank = seed.fields?.bank;
  return Array.isArray(bank) ? bank.filter((p): p is string => typeof p === 'string') : [];
}

/**
 * How the manager is shown the bank (`retrieve`): 'none', in bank order; 'last', the task's own
 * entry, when kept, last, next to the task (the others in bank order); 'found', as 'last', and
 * the fact also says whether the lookup found the task (`:kept` or `:new`), as Memory-R1's
 * manager is shown the entries a retriever found for a fact rather than searching the store
 * itself. Why: measured, a 4-layer base shown the bank in its own order never looked the task
 * up (ADD for 29 of 33 kept tasks the solver missed, NOOP for all 28 it solved), and with the
 * entry last it learned a prior toward "kept" and little of the comparison in 783 steps.
 */
export const RETRIEVE = ['none', 'last', 'found'] as const;
export type Retrieve = (typeof RETRIEVE)[number];

/** The manager's view of `bank` for a task: the entries shown (`memory`) and the fact, the task with the judge's and the critic's marks. */
export function managerView(
  bank: readonly string[],
  prompt: string,
  marks: { judge: string; critic: string },
  retrieve: Retrieve,
): { memory: string[]; fact: string } {
  const fact = `${prompt}${marks.judge}:${marks.critic}`;
  if (retrieve === 'none') return { memory: [...bank], fact };
  const memory = [...bank.filter((p) => p !== prompt), ...bank.filter((p) => p === prompt)];
  if (retrieve === 'last') return { memory, fact };
  return { memory, fact: `${fact}:${bank.includes(prompt) ? 'kept' : 'new'}` };
}

/**
 * The operation that keeps exactly what the solver got wrong (the environment's answer
 * decides, never shown to the manager): a task most attempts missed is added (or replaces an
 * entry, UPDATE, when the bank is full) unless it is kept already (NOOP); a kept task most
 * attempts now solve is deleted; any other solved task is let go (NOOP).
 */
export function rightOp(task: Task, bank: readonly string[], size: number, solved: boolean): BankOp['op'] {
  const kept = bank.includes(task.prompt);
  if (solved) return kept ? 'DELETE' : 'NOOP';
  if (kept) return 'NOOP';
  return bank.length >= size ? 'UPDATE' : 'ADD';
}

/** The right operation (`rightOp`) as the manager writes it; an ADD's or UPDATE's text is not read, and an UPDATE replaces the oldest entry. */
export function rightOpText(task: Task, bank: readonly string[], size: number, solved: boolean): string {
  const op = rightOp(task, bank, size, solved);
  if (op === 'DELETE') return `DELETE ${bank.indexOf(task.prompt)}`;
  if (op === 'UPDATE') return 'UPDATE 0 it';
  return op === 'ADD' ? 'ADD it' : 'NOOP';
}

/** Whether `op` is the right one: its kind, and for a DELETE the task's own entry. */
export function opIsRight(op: BankOp, bank: readonly string[], size: number, solved: boolean): boolean {
  const right = rightOp(op.task, bank, size, solved);
  if (op.op !== right) return false;
  return op.op !== 'DELETE' || op.entry === op.task.prompt;
}

/** The bank's carry: seeds shown the bank, `replay` kept tasks played again, the managers' operations applied in episode order. */
export function bankCarry(size: number, replay: number): ArenaCarry {
  const read = (kept: unknown): Task[] => ((kept as Kept | undefined)?.entries ?? []).slice();
  return {
    tasks(kept, tasks, it) {
      const entries = read(kept);
      const bank = entries.map((t) => t.prompt);
      // a rotating window, so every kept task is replayed in turn
      const start = entries.length ? (it * replay) % entries.length : 0;
      const again = Array.from({ length: Math.min(replay, entries.length) }, (_, k) => {
        const t = entries[(start + k) % entries.length];
        return { ...t, id: `kept-${it}-${k}` };
      });
      return [...tasks, ...again].map((t) => ({ ...t, fields: { ...t.fields, bank } }));
    },
    next(kept, episodes) {
      const entries = read(kept);
      const at = (prompt: string | undefined) => entries.findIndex((t) => t.prompt === prompt);
      for (const e of episodes) {
        const op = e.info?.op as BankOp | undefined;
        if (!op) continue;
        const plain: Task = { id: `bank-${op.task.prompt}`, family: op.task.family, prompt: op.task.prompt };
        if (op.task.answer !== undefined) plain.answer = op.task.answer;
        if (op.task.target !== undefined) plain.target = op.task.target;
        // another episode of the iteration may have changed the bank first: an op that no longer applies is skipped
        if (op.op === 'ADD' && at(plain.prompt) < 0 && entries.length < size) entries.push(plain);
        if (op.op === 'UPDATE' && at(plain.prompt) < 0 && at(op.entry) >= 0) entries[at(op.entry)] = plain;
        if (op.op === 'DELETE' && at(op.entry) >= 0) entries.splice(at(op.entry), 1);
      }
      return { entries } satisfies Kept;
    },
    metrics(kept) {
      return { 'bank/size': read(kept).length };
    },
  };
}
