/**
 * The five-roles manager's format for `coevolve pretrain` (`bank:`): a base that already solves,
 * judges and criticises is also taught the memory manager's turn of the five-roles arena, so
 * one frozen base carries all five adapters. Each example shows a bank of other tasks (the
 * task itself kept in some), and the task with the judge's and the critic's marks on its
 * attempts, drawn around a truth (most attempts right or not) with each mark flipped at
 * `noise`; the completion is the operation that keeps exactly what the solver got wrong
 * (`rightOp`), so the base reads both markers as a majority vote and RL refines it.
 */
import { z } from 'zod';
import { MemoryManagerRole, memoryOp } from '../../roles/memory.js';
import { rolePrompt } from '../../src/core/prompt.js';
import type { Observation } from '../../src/core/role.js';
import type { Task } from '../../src/core/types.js';
import { greedyTexts } from '../../src/models/greedy.js';
import type { LanguageModel } from '../../src/models/generate.js';
import type { PolicyInput } from '../../src/models/types.js';
import type { Tokenizer } from '../../src/tokenizer/types.js';
import type { Rng } from '../../src/util/rng.js';
import { managerView, opIsRight, RETRIEVE, rightOpText, type BankOp } from './bank.js';

export const BankCorpusSchema = z.strictObject({
  share: z.number().gt(0).lt(1), // manager examples, as a share of corpus.train, made on the training tasks
  size: z.number().int().positive().default(4), // the arena's `bank`
  attempts: z.number().int().positive().default(4), // the arena's `attempts`
  noise: z.number().min(0).max(0.5).default(0.1), // the chance that a mark disagrees with the attempt's truth
  kept: z.number().min(0).max(1).default(0.3), // the chance that the task is in the bank shown
  retrieve: z.enum(RETRIEVE).default('none'), // the bank shown as the arena's `retrieve` shows it (`managerView`)
});
export type BankCorpus = z.output<typeof BankCorpusSchema>;
/** How showings are drawn: a corpus's settings but its share (the evaluator draws held-out showings with them). */
export type BankDraw = Omit<BankCorpus, 'share'>;

/** A manager's turn as the arena shows it, with the truth the right operation follows. */
export interface BankShowing {
  observation: Observation;
  solved: boolean;
  task: Task;
}

/** Showings on `tasks`, each bank drawn from the prompts of `pool` (default the tasks) other than its own. */
export function bankShowings(
  tasks: readonly Task[],
  o: BankDraw,
  rng: Rng,
  pool: readonly Task[] = tasks,
): BankShowing[] {
  const prompts = [...new Set(pool.map((t) => t.prompt))];
  if (prompts.length <= o.size)
    throw new Error(`bank: ${prompts.length} distinct tasks cannot fill a bank of ${o.size} others`);
  return tasks.map((task) => {
    const bank: string[] = [];
    const n = rng.int(o.size + 1);
    while (bank.length < n) {
      const p = prompts[rng.int(prompts.length)];
      if (p !== task.prompt && !bank.includes(p)) bank.push(p);
    }
    if (bank.length && rng.next() < o.kept) bank[rng.int(bank.length)] = task.prompt;
    const solved = rng.next() < 0.5;
    // how many attempts were right: any count on the truth's side of a half
    const counts = Array.from({ length: o.attempts + 1 }, (_, r) => r).filter((r) => r * 2 > o.attempts === solved);
    const right = counts[rng.int(counts.length)];
    const truths = Array.from({ length: o.attempts }, (_, k) => k < right);
    const mark = () => truths.map((t) => ((rng.next() < o.noise ? !t : t) ? 'y' : 'n')).join('');
    const { memory, fact } = managerView(bank, task.prompt, { judge: mark(), critic: mark() }, o.retrieve);
    const shown = { id: task.id, family: task.family, prompt: task.prompt };
    return { observation: { task: shown, memory, fact, full: bank.length >= o.size }, solved, task };
  });
}

/** The operation that keeps what the solver got wrong, as the manager writes it (`rightOpText`). */
export function bankText(s: BankShowing, o: BankDraw): string {
  return rightOpText(s.task, s.observation.memory as string[], o.size, s.solved);
}

export function bankExamples(tokenizer: Tokenizer, showings: readonly BankShowing[], o: BankDraw): PolicyInput[] {
  const role = new MemoryManagerRole();
  return showings.map((s) => ({
    prompt: rolePrompt(tokenizer, role, role.render(s.observation)),
    completion: [...tokenizer.encode(bankText(s, o)), tokenizer.eos],
  }));
}

/** The share of greedy operations on `showings` that are right (`opIsRight`); one that does not parse is wrong. */
export function bankAccuracy(
  model: LanguageModel,
  tokenizer: Tokenizer,
  showings: readonly BankShowing[],
  o: BankDraw,
): number {
  const role = new MemoryManagerRole();
  const prompts = showings.map((s) => rolePrompt(tokenizer, role, role.render(s.observation)));
  const texts = greedyTexts(model, tokenizer, prompts, 12);
  const right = texts.filter((text, i) => {
    const s = showings[i];
    const action = role.parse(text, s.observation);
    if (!action.valid) return false;
    const bank = s.observation.memory as string[];
    const m = memoryOp(action.value!, bank);
    const op: BankOp = { op: m.op, task: s.task, ...('id' in m ? { entry: m.id } : {}) };
    return opIsRight(op, bank, o.size, s.solved);
  });
  return right.length / Math.max(1, showings.length);
}
