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
});
export type ObserverArenaOptions = z.output<typeof ObserverArenaOptionsSchema>;
