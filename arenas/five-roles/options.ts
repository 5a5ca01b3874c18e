import { z } from 'zod';
import { positiveInt, rerolloutCount } from '../options.js';
import { RETRIEVE } from './bank.js';

export const FiveRolesOptionsSchema = z.strictObject({
  attempts: positiveInt().default(4), // solver answers to each task (its comparison group)
  limits: z.record(z.string(), z.unknown()).default({}), // bounds a proposal must stay within, a difficulty of the family
  bank: positiveInt().default(8), // tasks the memory manager may keep
  replay: z.number().int().min(0).default(4), // kept tasks played again each iteration, beside the proposed ones
  critic: z.boolean().default(true), // the critic marks each answer's steps (off: four roles, for an ablation)
  // 'slip' or 'random': for each right attempt beyond the wrong ones, the critic also marks that working with one
  // step's result changed by the environment (a carry slip, or a random number of its length), so it is taught on
  // as many wrong steps as right ones where the solver is mostly right; 'none': only the attempts, balanced
  plant: z.enum(['none', 'slip', 'random']).default('none'),
  // what the manager's operation is paid against: 'answer', whether most attempts verify (the environment), or
  // 'marks', whether most of the judge's and the critic's marks it is shown say y (label-free, as the solver is
  // paid). Measured: paid on the answer while the marks it reads were near chance, it wrote NOOP 0.9 of the time
  managerTruth: z.enum(['answer', 'marks']).default('answer'),
  // where the manager's operation is wrong, the right one (by managerTruth, which its inputs decide under 'marks')
  // is added as a given turn (ActOptions.given) in its comparison group, paid 1: LUFFY's off-policy guidance, as the
  // adversarial critic's `guide`. Why: a DELETE must name the kept task's position, which sampling almost never finds
  // (5 right of about 240 in 45 iterations, the manager writing NOOP instead)
  guide: z.boolean().default(false),
  // how the manager is shown the bank: in bank order, the task's own entry last, or that and whether it was found
  retrieve: z.enum(RETRIEVE).default('none'), // (`managerView`)
  // what the manager's operation is compared with: every manager turn of the batch, or only those whose right
  // operation is of the same kind: its comparison group is `batch:<kind>` (for grpo) and its decision point
  // `manager:<kind>` (for the 'infostate' advantage, a moving baseline per kind). Why: the solver is mostly right, so
  // NOOP is the right operation for most turns; against one batch baseline a right NOOP earns a positive advantage on
  // every showing and the manager drifted to NOOP everywhere (found-short seed 1: NOOP on 0.86 to 1 of its operations
  // from iteration 21, held-out right operations 0.805 -> 0.535 by 50)
  managerCompare: z.enum(['batch', 'kind']).default('batch'),
  // 0: one operation per showing; K >= 2: Memory-R2's local re-rollouts, K operations sampled from the same showing,
  // each paid whether it is right (`opIsRight`), compared only with each other (MANAGER_SCOPE), the first applied.
  // Why: across showings the manager's comparisons pull by the kinds' counts (every baseline tried drove it to NOOP,
  // found-short and found-kind); within one showing a right operation is ranked only against wrong ones of the
  // same state, and a showing it always gets right teaches nothing. With `guide`, the given turn is added where no
  // sample was right
  managerRerollouts: rerolloutCount(),
  // the judge's verdicts on each attempt, each after its own working (GenRM's several sampled verifications): the
  // solver is paid their share of y, or their majority with the peer judge's `aggregate`; the manager reads the first,
  // and only the first teaches the judge.
  // Why: measured (found-reroll-guided, 3 seeds, experiments/judge-pay.ts), the judge's own working was wrong before 18
  // to 22% of its verdicts, and then it said y to 0.27 to 0.33 of right answers (0.88 to 0.90 after right working)
  verdicts: positiveInt().default(1),
  // what pays the solver: 'sampled', those verdicts; 'greedy', one more own working and verdict after them, both
  // greedy, that teach nothing (ActOptions.temperature), while the sampled ones teach the judge and the manager reads
  // the first. Why: measured (found-reroll-guided), a sampled own working was wrong before a fifth of the verdicts, and
  // four sampled verdicts paid by their majority did not separate right from wrong answers better than one
  pay: z.enum(['sampled', 'greedy']).default('sampled'),
  // 'adjacent' or 'any': for each right attempt beyond the wrong ones, the judge also says y or n of a slip of its
  // answer (one digit changed a step up or down, or to any other), after the same own working as its first verdict,
  // taught n and paying no one (Cooper's negative, SPC's planted errors, as the critic's `plant`); the judge's
  // teaching is then balanced over the attempts and the slips. Why: measured (found-reroll-guided, seed 1), the
  // solver's wrong answers were one digit off (135 of 429 by 1, 123 by a multiple of 10 in iterations 1 to 25), and
  // after its own right working the judge still said y to 0.31 of them; taught only on the attempts, it was taught on
  // about 17 wrong answers an iteration
  judgePlant: z.enum(['none', 'adjacent', 'any']).default('none'),
});
export type FiveRolesOptions = z.output<typeof FiveRolesOptionsSchema>;

/** The comparison group of the judge's own answers and of the critic's checks: apart from their verdicts. */
export const OWN_SCOPE = 'episode:own';
export const CHECK_SCOPE = 'episode:check';
