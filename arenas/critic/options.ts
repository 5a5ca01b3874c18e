/** The adversarial critic arena's options: what each does, their defaults and which need another. */
import { z } from 'zod';
import { positiveInt } from '../options.js';

export interface CriticArenaOptions extends Record<string, unknown> {
  /**
   * who plants the error: 'sneaky' (the sneaky role, SPC), 'random' (the environment replaces
   * one step's result by a random number of as many digits: the baseline), or 'slip' (the
   * environment shifts one step's result by 1 or 10, a carry slip: a held-out test), or
   * 'given' (each task's wrong working comes with it, e.g. a solver's own mistakes, as
   * ProcessBench's are: a held-out test)
   */
  corrupter: 'sneaky' | 'random' | 'slip' | 'given';
  /** the critic's verdicts on each showing (a verdict turn's comparison group is the episode's verdicts; per step, the episode's answers to that step) */
  verdicts: number;
  /** what a sneaky attempt without a rule-confirmed error costs the sneaky role */
  penalty: number;
  /**
   * before each verdict the critic checks: shown the task and the working's first step
   * without its result it solves on, then gives its verdict shown its results beside the
   * shown ones (CriticRole). The check is paid by the results of right working from that
   * first step (rightResults; the `verdict` judge reads them as its truth), in a comparison
   * group of its own. Why: checking a sum in the pass that reads it is beyond these models,
   * and a critic that wrote its sums after reading the shown ones copied them
   */
  checkFirst: boolean;
  /**
   * with checkFirst: after its check the critic is asked of each step alone, without the task,
   * whether the shown result agrees with its own (`69+34=102>103?`, 'y' or 'n'), each answer
   * paid by that step's truth (right working's result is the shown one) as a process reward
   * model is, in a comparison group per step; its verdict is the first step it says 'n' to
   * ('0' if none). Why: asked after the three-number task, no layout of the comparison was
   * learned even from right labels; asked alone it was (docs/judges.md)
   */
  perStep: boolean;
  /**
   * what the sneaky role writes: 'working' (its own working for the task, from the task alone)
   * or 'result' (SPC's rewrite of one step: shown the task and right working up to a step
   * drawn per task, without that step's result, it writes the result, and every later step
   * follows rightly from it, as plantError does; a right result is no error and invalid)
   */
  sneakyWrites: 'working' | 'result';
  /**
   * with perStep, the comparison group of an answer to a step: 'episode' (the episode's answers
   * to that step over both showings, so an answer on planted working is weighed against one on
   * right working) or 'showing' (the answers to that step of one showing: GRPO's group of
   * answers to one prompt). Why 'showing': a confidently wrong answer is rarely contradicted,
   * and GRPO's division by the group's standard deviation weighs the rare right answer among
   * answers to the same prompt by 1/sqrt(q(1-q)) where a pooled group does not
   */
  stepGroups: 'episode' | 'showing';
  /**
   * with checkFirst: the check is written by the role 'checker' (a critic kind; bind it to a
   * frozen copy of the critic's start, `train: false`) instead of the critic, which then
   * learns only its verdicts. Why: the check is long working and the verdict one token; at
   * lr 1e-3 the critic's own checks fell from 0.83 to under 0.1 right in 25 iterations (KL
   * 0.05 or 0.5), and a frozen checker keeps them right whatever the verdict's rate (the
   * verdicts alone still degraded at 1e-3: docs/judges.md)
   */
  checker: boolean;
  /**
   * with perStep: where a sampled answer to a step is wrong and the critic's own result for
   * that step is right (so the answer is the comparison of two shown numbers), the right
   * answer is added as a given turn (ActOptions.given) in the same comparison group, paid as
   * any answer. Why: a confidently wrong 'y' (p(n) about 0.06 on the sneaky role's tens-digit
   * errors, whose checks were right 0.93 to 0.95 of the time) gets a policy-gradient pull of
   * about p(n)(1 - p(n)) times the advantage gap, a tenth of supervision's 1 - p(n); the given
   * 'n' is pulled as supervision would be. Given turns stay out of the verdicts and accuracies.
   */
  guide: boolean;
}

/** {@link CriticArenaOptions} with their defaults; options that need another say why. */
export const CriticArenaOptionsSchema: z.ZodType<CriticArenaOptions> = z
  .strictObject({
    corrupter: z.enum(['sneaky', 'random', 'slip', 'given']).default('sneaky'),
    verdicts: positiveInt().default(2),
    penalty: z.number().nonnegative().default(1),
    checkFirst: z.boolean().default(false),
    perStep: z.boolean().default(false),
    sneakyWrites: z.enum(['working', 'result']).default('working'),
    stepGroups: z.enum(['episode', 'showing']).default('episode'),
    checker: z.boolean().default(false),
    guide: z.boolean().default(false),
  })
  .superRefine((o, ctx) => {
    const need = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (o.guide && !o.perStep) need('guide', 'applies to perStep answers');
    if (o.checker && !o.checkFirst) need('checker', 'needs checkFirst (the checker writes the check)');
    if (o.sneakyWrites !== 'working' && o.corrupter !== 'sneaky')
      need('sneakyWrites', `applies to corrupter 'sneaky', not '${o.corrupter}'`);
    if (o.stepGroups !== 'episode' && !o.perStep) need('stepGroups', 'applies to perStep answers');
    if (o.perStep && !o.checkFirst)
      need('perStep', "needs checkFirst (each step is asked beside the critic's own result)");
  });
