/**
 * The collapse watch's settings (`collapse:` in a run's config) and `stopOn`. Every default is
 * argued in docs/collapse.md from the runs it was tested on: each flags the recorded collapses
 * (self-certainty, the judge-paid solver) before they complete and stays quiet on healthy RLVR.
 * Zod only, so loading a config loads no tensor code.
 */
import { z } from 'zod';
import { posInt } from '../config/fields.js';

/** What may end a run before its last iteration: `stopOn: collapse`. */
export const STOP_ON = ['collapse'] as const;

const share = () => z.number().gt(0).max(1);
const count = posInt;

export const CollapseSchema = z.strictObject({
  // the held-out metric the best checkpoint is chosen by (default: eval/pass1, or the first held-out accuracy the run measures)
  watch: z.string().min(1).optional(),
  // held-out accuracy falling while the training reward rises (label-free RL's rise-then-fall)
  heldOut: z
    .strictObject({
      drop: share().default(0.1), // the fall from the best measurement, in accuracy (about 3 standard errors of a 256-task evaluation)
      relative: share().default(0.2), // and at least this share of the best, so a low curve's noise is not a collapse
      window: count().default(5), // iterations of training reward compared, at the best against now
    })
    .prefault({}),
  // a judge or critic giving the same verdict whatever it is shown (`constant_verdict`, src/util/verdicts.ts)
  verdict: z
    .strictObject({
      share: share().default(0.9), // the least share of its usual verdict on the showings of either truth
      patience: count().default(3), // consecutive measurements of one metric at or past it
    })
    .prefault({}),
  // a proposer stuck in one difficulty cell (`top_cell_share`, arenas/propose-solve.ts and the proposals evaluator)
  cell: z
    .strictObject({
      share: share().default(0.9), // the share of valid proposals in the most common cell, averaged over the window
      window: count().default(5), // measurements averaged
    })
    .prefault({}),
  // the policy's entropy collapsing (`rollout/entropy`, relative to the run's start)
  entropy: z
    .strictObject({
      ratio: share().default(0.1), // the recent mean at or below this share of the starting mean
      window: count().default(10), // iterations in each mean (the first ones, the last ones)
    })
    .prefault({}),
});

export type CollapseOptions = z.output<typeof CollapseSchema>;

/** The defaults, as a config without a `collapse:` section gets them. */
export const DEFAULT_COLLAPSE: CollapseOptions = CollapseSchema.parse({});
