import type { Observable } from 'rxjs';
import { fromRun } from './operators/from-run.js';
import type { Episode, Task, Turn } from '../src/core/types.js';
import type { TaskFamily } from '../src/tasks/types.js';
import {
  firstWrongStep,
  plantError,
  resultsAgree,
  rightResults,
  scratchpadTarget,
  stepResults,
  sumOperands,
} from '../src/tasks/scratchpad.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { invalid } from '../roles/types.js';
import { z } from 'zod';
import { arenaOptions, positiveInt } from './options.js';
import type { ActOptions, Arena, ArenaContext, EpisodeEnd } from './types.js';

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

/** The comparison group of a critic's checks (checkFirst), apart from its verdicts. */
const CHECK_SCOPE = 'episode:check';

const SLIPS = [-10, -1, 1, 10];

/**
 * Self-Play Critic (SPC): a step critic against a sneaky generator, on sums worked step by
 * step (`12+34+56=` worked as `12+56=68,68+34=102`). The environment writes right working
 * (an operand order drawn from the task id). The sneaky role writes working of its own
 * (see SneakyRole for why it is not shown the right working); the rule checker (src/tasks/scratchpad.ts, never the model) must find a wrong
 * step in it, or the attempt is invalid and costs `penalty`. The critic, shown working,
 * names its first wrong step or '0' for none, `verdicts` times on the planted working and as
 * often on the right working, so that naming a step blindly does not pay.
 *
 * Zero-sum rewards, as SPC: a critic verdict on the planted working is +1 when it names the
 * first wrong step and -1 otherwise (an invalid verdict too), and the sneaky role's outcome
 * is minus the mean of those, so it wins +1 when every verdict misses. On the right working
 * the critic earns +1 or -1 alone. The critic's rewards come from the `verdict` judge (each
 * verdict's turn, or with `perStep` each step's answer, carries its truth as its task's
 * answer), the sneaky role's from `outcome`, computed on the verdicts (per step: the first
 * step rejected). With `corrupter: random | slip` the environment plants the error and only
 * the critic acts. With `checkFirst` each verdict follows the critic's own check, the
 * working solved on, and a sneaky attempt whose first wrong step such a check cannot see (a
 * misread operand with a right sum, where right working from the shown first step agrees) is
 * invalid: the game is about errors the critic can find. The verdicts are kept in the
 * episode's info (`verdicts: { planted, right }`, null for an invalid one).
 */
export class AdversarialCriticArena implements Arena {
  readonly kind = 'adversarial-critic';
  readonly roles: Record<string, string>;
  readonly options: CriticArenaOptions;

  /** `given`: the wrong working of each task by its id, for `corrupter: given` */
  constructor(
    options: unknown,
    family: TaskFamily<unknown>,
    private readonly given?: ReadonlyMap<string, string>,
  ) {
    this.options = arenaOptions(CriticArenaOptionsSchema, options);
    if (this.options.corrupter === 'given' && !given)
      throw new Error(
        "arena.options.corrupter: 'given' is for the critic evaluator, whose data file carries each task's working",
      );
    if (family.name !== 'arithmetic')
      throw new Error(
        `arena 'adversarial-critic' does not serve task family '${family.name}': it needs sums worked step by step (family 'arithmetic')`,
      );
    this.roles = {
      ...(this.options.corrupter === 'sneaky' ? { sneaky: 'sneaky' } : {}),
      critic: 'critic',
      ...(this.options.checker ? { checker: 'critic' } : {}),
    };
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const operands = sumOperands(task.prompt);
    if (!operands || operands.length < 2 || operands.length > 10)
      throw new Error(
        `arena 'adversarial-critic': task ${task.id} is not a sum of 2 to 10 operands: ${JSON.stringify(task.prompt)}`,
      );
    const rng = new Rng(hashText(task.id));
    const right = scratchpadTarget(operands, rng);
    const steps = operands.length - 1;
    let planted: string | null;
    if (this.options.corrupter === 'sneaky') {
      const rewrite = this.options.sneakyWrites === 'result';
      const at = rewrite ? 1 + rng.int(steps) : 0;
      // shown right working up to step `at` without its result, it writes that result
      const prefix = right.split(',').slice(0, at).join(',').replace(/=\d+$/, '=');
      const attempt = await ctx.act('sneaky', rewrite ? { task, prefix } : { task }, { compare: 'group' });
      if (rewrite && attempt.action.valid) {
        const value = Number(attempt.action.value);
        const result = Number(stepResults(right)![at - 1]);
        if (value === result) attempt.action = invalid(`step ${at}'s result ${value} is right: nothing was planted`);
        else attempt.action = { ...attempt.action, value: plantError(right, at, value) };
      }
      const check = attempt.action.valid ? firstWrongStep(operands, attempt.action.value!) : null;
      const seen =
        check && 'first' in check && this.options.checkFirst
          ? resultsAgree(operands, attempt.action.value!)!.indexOf(false) + 1
          : 0;
      if (check && 'first' in check && check.first === 0)
        attempt.action = invalid('the rule checker finds no wrong step: nothing was planted');
      else if (check && 'error' in check) attempt.action = invalid(check.error);
      else if (check && this.options.checkFirst && seen !== check.first) {
        attempt.action = invalid(
          `the first wrong step is ${check.first}, but right working from the shown first step first differs ` +
            `${seen ? `at step ${seen}` : 'nowhere'} (a misread operand with a right sum): a critic that checks cannot see it`,
        );
      }
      emit(attempt);
      if (!attempt.action.valid) {
        emit({ end: true, outcome: { sneaky: -this.options.penalty }, info: { planted: null } });
        return;
      }
      planted = attempt.action.value;
    } else if (this.options.corrupter === 'given') {
      planted = this.given?.get(task.id) ?? null;
      const check = planted === null ? null : firstWrongStep(operands, planted);
      if (!check || !('first' in check) || check.first === 0)
        throw new Error(
          `arena 'adversarial-critic': task ${task.id} has no given working with a wrong step${check && 'error' in check ? ` (${check.error})` : ''}`,
        );
    } else {
      const at = 1 + rng.int(steps);
      const result = Number(right.split(',')[at - 1].split('=')[1]);
      planted = plantError(
        right,
        at,
        this.options.corrupter === 'slip' ? slip(result, rng) : randomOfLength(result, rng),
      );
    }
    const truth = String((firstWrongStep(operands, planted!) as { first: number }).first);
    /** the critic's verdicts on one showing, `verdicts` times: a step, '0', or null for an invalid one */
    const ask = async (working: string, answer: string, showing: string): Promise<(string | null)[]> => {
      const judged: Task = { id: `${task.id}/${showing}`, family: task.family, prompt: task.prompt, answer };
      const results = rightResults(operands, working)!;
      const rightSteps = results.split(',');
      const checked: Task = {
        id: `${task.id}/${showing}/check`,
        family: task.family,
        prompt: task.prompt,
        answer: results,
      };
      const verdict = async (): Promise<string | null> => {
        if (!this.options.checkFirst)
          return own(await ctx.act('critic', { task, working, steps }, { compare: 'episode', task: judged }));
        const check = await ctx.act(
          this.options.checker ? 'checker' : 'critic',
          { task, working, steps, stage: 'check' },
          { compare: CHECK_SCOPE, task: checked },
        );
        emit(check);
        const seen = { task, working, steps, check: check.action.valid ? check.action.value! : '' };
        if (!this.options.perStep) return own(await ctx.act('critic', seen, { compare: 'episode', task: judged }));
        const mine = check.action.valid ? check.action.value!.split(',') : [];
        const answered = await Promise.all(
          resultsAgree(operands, working)!.map(async (agrees, k) => {
            const filed: ActOptions & { task: Task } = {
              compare:
                this.options.stepGroups === 'showing' ? `episode:${showing}:step${k + 1}` : `episode:step${k + 1}`,
              task: {
                id: `${task.id}/${showing}/step${k + 1}`,
                family: task.family,
                prompt: task.prompt,
                answer: agrees ? 'y' : 'n',
              },
            };
            const mark = await ctx.act('critic', { ...seen, step: k + 1 }, filed);
            const missed = !(mark.action.valid && mark.action.value === filed.task.answer);
            const guided = this.options.guide && missed && mine[k] === rightSteps[k];
            return {
              mark,
              given: guided
                ? await ctx.act('critic', { ...seen, step: k + 1 }, { ...filed, given: filed.task.answer! })
                : undefined,
            };
          }),
        );
        for (const { mark, given } of answered) [mark, given].forEach((t) => t && emit(t));
        return firstRejected(answered.map(({ mark: t }) => (t.action.valid ? t.action.value : null)));
      };
      return Promise.all(Array.from({ length: this.options.verdicts }, verdict));
    };
    /** a verdict turn's verdict, emitted */
    const own = (t: Turn): string | null => {
      emit(t);
      return t.action.valid ? t.action.value : null;
    };
    // the order of the two showings is drawn, so the critic cannot learn it from the turn order
    const showings: [string, string, 'planted' | 'right'][] = [
      [planted!, truth, 'planted'],
      [right, '0', 'right'],
    ];
    if (rng.next() < 0.5) showings.reverse();
    const verdicts: Record<string, (string | null)[]> = {};
    for (const [working, answer, showing] of showings) verdicts[showing] = await ask(working, answer, showing);
    const critic =
      verdicts.planted.map((v) => (v === truth ? 1 : -1) as number).reduce((a, b) => a + b, 0) /
      verdicts.planted.length;
    emit({
      end: true,
      ...(this.options.corrupter === 'sneaky' ? { outcome: { sneaky: -critic } } : {}),
      info: { planted, truth, verdicts },
    });
  }

  /**
   * The critic's accuracy over all verdicts, on planted working (`critic/planted_accuracy`:
   * naming the first wrong step) and on right working (`critic/right_accuracy`: saying '0'),
   * its valid rate, and the sneaky role's valid rate (a rule-confirmed error) and win rate
   * (the share of its valid attempts where most verdicts missed). A critic that checks first
   * also gets `critic/check_accuracy`: the share of its checks that reach right working's
   * results; asked per step, `critic/step_accuracy`: the share of steps it says rightly agree or not.
   * What was planted: `planted/one_digit`, `planted/many_digits`, `planted/length`, the shares
   * of planted errors whose wrong result differs from the right one in one digit, in more, or
   * in its digit count (errorKind), and `critic/found/<kind>`, the share of the critic's
   * verdicts on each kind that name the first wrong step: where its blind spot is.
   */
  metrics(episodes: readonly Episode[]): Record<string, number> {
    const m: Record<string, number> = {};
    const share = <T>(xs: T[], f: (x: T) => boolean) => xs.filter(f).length / xs.length;
    const asked = episodes.flatMap((e) => {
      const info = e.info as { truth?: string; verdicts?: Record<string, (string | null)[]> } | undefined;
      return Object.entries(info?.verdicts ?? {}).flatMap(([showing, vs]) =>
        vs.map((v) => ({ showing, right: v === (showing === 'planted' ? info!.truth : '0'), valid: v !== null })),
      );
    });
    if (asked.length) {
      m['critic/accuracy'] = share(asked, (v) => v.right);
      m['critic/valid_rate'] = share(asked, (v) => v.valid);
      for (const showing of ['planted', 'right']) {
        const some = asked.filter((v) => v.showing === showing);
        if (some.length) m[`critic/${showing}_accuracy`] = share(some, (v) => v.right);
      }
    }
    const critic = episodes.flatMap((e) =>
      e.turns.filter((t) => (t.role === 'critic' || t.role === 'checker') && t.task?.answer !== undefined),
    );
    const right = (t: Turn) => t.action.valid && t.action.value === t.task!.answer;
    const checks = critic.filter((t) => t.compare === CHECK_SCOPE);
    if (checks.length) m['critic/check_accuracy'] = share(checks, right);
    const steps = critic.filter((t) => !t.given && /^episode:(\w+:)?step\d+$/.test(t.compare ?? ''));
    if (steps.length) m['critic/step_accuracy'] = share(steps, right);
    const kinds = episodes.flatMap((e) => {
      const info = e.info as
        { planted?: string | null; truth?: string; verdicts?: Record<string, (string | null)[]> } | undefined;
      if (!info?.planted || !info.truth) return [];
      return [
        {
          kind: errorKind(sumOperands(e.task.prompt)!, info.planted, Number(info.truth)),
          found: (info.verdicts?.planted ?? []).map((v) => v === info.truth),
        },
      ];
    });
    for (const kind of kinds.length ? (['one_digit', 'many_digits', 'length'] as const) : []) {
      m[`planted/${kind}`] = share(kinds, (k) => k.kind === kind);
      const found = kinds.filter((k) => k.kind === kind).flatMap((k) => k.found);
      if (found.length) m[`critic/found/${kind}`] = share(found, (f) => f);
    }
    const attempts = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'sneaky'));
    if (attempts.length) {
      m['sneaky/valid_rate'] = share(attempts, (t) => t.action.valid);
      const played = episodes.filter((e) => e.turns.some((t) => t.role === 'sneaky' && t.action.valid));
      if (played.length)
        m['sneaky/win_rate'] = played.filter((e) => (e.outcome?.sneaky ?? 0) > 0).length / played.length;
    }
    return m;
  }
}

/**
 * A per-step critic's verdict from its answers in step order ('y', 'n', null for invalid): the
 * first step it says 'n' to, '0' when it says 'y' to all, null when an invalid answer comes
 * before any 'n' (what follows a rejected step does not change the verdict).
 */
export function firstRejected(marks: readonly (string | null)[]): string | null {
  for (const [k, m] of marks.entries()) {
    if (m === null) return null;
    if (m === 'n') return String(k + 1);
  }
  return '0';
}

/**
 * How a planted step's result differs from right working's (from the shown first step): in one
 * digit, in more, or in its digit count. Why: which errors the sneaky role settles on is what
 * the critic learns from; a carry slip is one digit, a random number of as many digits mostly more.
 */
function errorKind(operands: readonly number[], working: string, step: number): 'one_digit' | 'many_digits' | 'length' {
  const shown = stepResults(working)![step - 1];
  const right = rightResults(operands, working)!.split(',')[step - 1];
  if (shown.length !== right.length) return 'length';
  return [...shown].filter((d, i) => d !== right[i]).length === 1 ? 'one_digit' : 'many_digits';
}

/** A carry slip: the result shifted by 1 or 10, up or down, staying a whole number. */
function slip(result: number, rng: Rng): number {
  const options = SLIPS.map((d) => result + d).filter((v) => v >= 0);
  return options[rng.int(options.length)];
}

/** Another number with as many digits as `result`, uniformly drawn. */
function randomOfLength(result: number, rng: Rng): number {
  const digits = String(result).length;
  const [lo, hi] = digits === 1 ? [0, 9] : [10 ** (digits - 1), 10 ** digits - 1];
  const v = lo + rng.int(hi - lo);
  return v >= result ? v + 1 : v;
}
