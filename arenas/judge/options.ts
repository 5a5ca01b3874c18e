/** The judge arena's options: what each does, their defaults and which need another. */
import { z } from 'zod';
import { positiveInt } from '../options.js';

/** The comparison group of a judge's own answers (solveFirst), apart from its verdicts. */
export const OWN_SCOPE = 'episode:own';

export interface JudgeArenaOptions extends Record<string, unknown> {
  /** 'pairwise': the judge names the right one of two answers; 'pointwise': it says whether one answer is right */
  mode: 'pairwise' | 'pointwise';
  /** solver answers per task, from which the judged ones are drawn */
  candidates: number;
  /** the judge's verdicts on each showing (its comparison group is the episode's verdicts) */
  verdicts: number;
  /**
   * pointwise only: judge every valid answer, not one right and one wrong; each answer and
   * the verdicts on it share a task id, so the `peer` judge can pay the solver the judge's
   * verdicts (a judge in the loop) while the `verdict` judge trains the judge on the truth of
   * one right and one wrong answer per mixed task (balanced, as Cooper picks a positive and a
   * negative); the verdicts on the other answers carry no truth and teach the judge nothing
   */
  judgeAll: boolean;
  /** judgeAll only: which wrong answer teaches the judge, 'first' or 'fooling' (the one that drew the most 'y') */
  negative: 'first' | 'fooling';
  /**
   * the share of judged tasks whose wrong answer is a slip planted by the environment, one
   * digit of a right answer changed, instead of the solver's own: a solver's errors sit mostly
   * in the last digit, and a judge taught on them compares only that digit. With judgeAll, the
   * share of tasks with no wrong answer among the solver's whose judge is taught on a planted
   * slip beside a right answer (its verdicts pay no one): measured, a frozen judge's 'y' to the
   * solver's wrong answers rose from 0.38 to 0.66 over a loop, as the solver kept the slips it
   * missed, and a judge that learns in the loop sees a wrong answer in fewer than 1 task in 10
   */
  plant: number;
  /**
   * how a planted slip changes its digit: 'any' to any other digit, 'adjacent' one up or down
   * (the carry error a solver makes: measured, a judge taught on 'any' slips learned to tell
   * far digits apart and still said 'y' to two in three of the solver's own off-by-one slips)
   */
  slip: 'any' | 'adjacent';
  /**
   * pointwise only: before each verdict the judge writes its own answer to the task alone (a
   * turn of its own, paid by the task's answer), then gives the verdict shown its answer and
   * the one judged (`task own|shown?`): its answer is not anchored on the one shown, and each
   * digit sits a fixed distance from the digit it matches (measured: supervised on the right
   * verdicts it learns every digit in a third of the steps it needs with its answer after the
   * shown one, where a judge trained by RL compared only the last digit)
   */
  solveFirst: boolean;
  /**
   * where the judged answers come from: 'solver', the solver's own (sampled `candidates` times);
   * 'fixed', no solver at all: the task's answer and one wrong answer made from it (a slip, as
   * `slip` says, drawn from the task id), so every task is judged on one right and one wrong
   * answer whatever a solver does (a held-out set in known shares, that a collapsed solver cannot empty)
   */
  answers: 'solver' | 'fixed';
}

/** {@link JudgeArenaOptions} with their defaults; options that need another say why. */
export const JudgeArenaOptionsSchema: z.ZodType<JudgeArenaOptions> = z
  .strictObject({
    mode: z.enum(['pairwise', 'pointwise']).default('pairwise'),
    candidates: z.number().int().min(2, 'at least 2 (a pair needs two answers)').default(4),
    verdicts: positiveInt().default(2),
    judgeAll: z.boolean().default(false),
    negative: z.enum(['first', 'fooling']).default('first'),
    plant: z.number().min(0).max(1).default(0),
    slip: z.enum(['any', 'adjacent']).default('any'),
    solveFirst: z.boolean().default(false),
    answers: z.enum(['solver', 'fixed']).default('solver'),
  })
  .superRefine((o, ctx) => {
    const need = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (o.solveFirst && o.mode !== 'pointwise')
      need('solveFirst', "needs mode 'pointwise' (its own answer beside the one judged)");
    if (o.judgeAll && o.mode !== 'pointwise') need('judgeAll', "needs mode 'pointwise' (each answer judged alone)");
    if (o.answers === 'fixed' && (o.judgeAll || o.plant > 0))
      need(
        'answers',
        "'fixed' judges the task's answer and a slip of it: judgeAll and plant need the solver's answers",
      );
  });
