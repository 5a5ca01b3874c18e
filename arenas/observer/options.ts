/** The observer arena's options: what each does and its default. */
import { z } from 'zod';
import { positiveInt } from '../options.js';

export const ObserverArenaOptionsSchema = z.strictObject({
  /** the most characters a hint may have (the observer's length budget) */
  budget: positiveInt().default(6),
  /** other tasks of the family shown to the observer beside the task (view.ts) */
  distractors: z.number().int().nonnegative().max(8).default(2),
  /** the family difficulty the distractors are drawn at (checked by the family; default its defaults) */
  difficulty: z.record(z.string(), z.unknown()).default({}),
  /** the solver's answers to each hint (their comparison group), and to the baseline text */
  attempts: positiveInt().default(4),
  /**
   * the text whose solver accuracy the observer's utility is measured against: 'cut' (the
   * observer's view cut to the budget, a summary that needs no observer) or 'none' (no text:
   * an accuracy of 0, no solver asked)
   */
  baseline: z.enum(['cut', 'none']).default('cut'),
  /**
   * show each candidate after a letter (`a:83+19=,b:47+25=*`) and ask for a hint that opens
   * with the letter of what it copies (`b:47+25=`; the solver is shown what follows the letter,
   * within the budget): the choice is then one character and the copy is anchored by it, which
   * a small observer learns where it cannot keep a choice of its own (docs/observer.md)
   */
  labelled: z.boolean().default(false),
});
export type ObserverArenaOptions = z.output<typeof ObserverArenaOptionsSchema>;
