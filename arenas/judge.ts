import type { Observable } from 'rxjs';
import { fromRun } from './operators/from-run.js';
import type { Episode, Task, Turn } from '../src/core/types.js';
import type { TaskFamily } from '../src/tasks/types.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { peerDiagnostics } from '../judges/peer.js';
import { z } from 'zod';
import { arenaOptions, positiveInt } from './options.js';
import type { Arena, ArenaContext } from './types.js';

/** The comparison group of a judge's own answers (solveFirst), apart from its verdicts. */
const OWN_SCOPE = 'episode:own';

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
   * the share of judged tasks (not judgeAll) whose wrong answer is a slip planted by the
   * environment, one digit of a right answer changed, instead of the solver's own: a solver's
   * errors sit mostly in the last digit, and a judge taught on them compares only that digit
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
  })
  .superRefine((o, ctx) => {
    const need = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (o.solveFirst && o.mode !== 'pointwise')
      need('solveFirst', "needs mode 'pointwise' (its own answer beside the one judged)");
    if (o.judgeAll && o.plant > 0)
      need('plant', "judgeAll judges the solver's own answers only; plant needs judgeAll false");
    if (o.judgeAll && o.mode !== 'pointwise') need('judgeAll', "needs mode 'pointwise' (each answer judged alone)");
  });

/**
 * A judge that learns whether answers are right (JudgeLRM): the solver answers the task
 * `candidates` times, the family's verifier marks each answer (the environment knows the
 * truth; model text is parsed, never run), and the judge is shown answers drawn from them.
 * Only a task with a right and a wrong answer is judged (so the truths are balanced and
 * chance is 1/2); a task whose answers are all right or all wrong has no verdict.
 * - pairwise: the first right and the first wrong answer, in both orders (which comes first
 *   is drawn from the task id), `verdicts` times each; the truth is the right one's letter.
 * - pointwise: each of the two alone, `verdicts` times each; the truth is 'y' or 'n'.
 * Each verdict's turn carries its own task whose `answer` is the truth, so the `verdict`
 * judge rewards it from plain data. The solver's answers compare within the episode, and so
 * do the judge's verdicts. Metrics: the judge's accuracy, valid rate and F1 (pairwise: the
 * mean of both letters' F1; pointwise: F1 of flagging a wrong answer), position consistency
 * (pairwise: the share of verdict pairs, the k-th of each order, that pick the same answer),
 * pair accuracy (pointwise: the share of k-th verdict pairs that say 'y' to the right answer
 * and 'n' to the wrong one; each answer is judged alone, so no position can sway it), and
 * the share of tasks that gave something to judge.
 */
export class JudgeArena implements Arena {
  readonly kind = 'judge';
  readonly roles = { solver: 'solver', judge: 'judge' };
  readonly options: JudgeArenaOptions;

  constructor(
    options: unknown,
    private readonly family: TaskFamily<unknown>,
  ) {
    this.options = arenaOptions(JudgeArenaOptionsSchema, options);
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  private async run(task: Task, ctx: ArenaContext, emit: (t: Turn) => void): Promise<void> {
    const all = this.options.judgeAll;
    // judging every answer: each answer's turn is filed under its own id, shared with the verdicts on it
    const answers = await Promise.all(
      Array.from({ length: this.options.candidates }, (_, k) =>
        ctx.act(
          'solver',
          { task },
          { compare: 'episode', ...(all ? { task: { ...task, id: `${task.id}/a${k}` } } : {}) },
        ),
      ),
    );
    answers.forEach(emit);
    const right = answers.filter((t) => t.action.valid && this.family.verify(task, t.text));
    const wrong = answers.filter((t) => !right.includes(t));
    const rng = new Rng(hashText(task.id));
    // target: the ideal completion, the reference answer as working then the verdict (a `verdict` judge with score 'working' reads it);
    // a showing filed without its truth teaches the judge nothing (the verdict judges abstain on it)
    const judged = (showing: string, truth?: string): Task => ({
      id: `${task.id}/${showing}`,
      family: task.family,
      prompt: task.prompt,
      ...(truth !== undefined
        ? { answer: truth, ...(task.answer !== undefined ? { target: `${task.answer}${truth}` } : {}) }
        : {}),
    });
    // solveFirst: the judge's own answer, paid by the task's answer (the `verdict` judge reads it as this turn's truth), in a comparison group of its own
    const own = (showing: string, truth?: string): Task => ({
      id: `${task.id}/${showing}/own`,
      family: task.family,
      prompt: task.prompt,
      ...(truth !== undefined && task.answer !== undefined ? { answer: task.answer } : {}),
    });
    const verdictsOn = (shown: string[], showing: string) =>
      Promise.all(
        Array.from({ length: this.options.verdicts }, async (): Promise<Turn[]> => {
          if (!this.options.solveFirst)
            return [await ctx.act('judge', { task, answers: shown }, { compare: 'episode', task: judged(showing) })];
          const mine = await ctx.act('judge', { task, answers: [] }, { compare: OWN_SCOPE, task: own(showing) });
          return [
            mine,
            await ctx.act(
              'judge',
              { task, working: mine.text.trim(), answers: shown },
              { compare: 'episode', task: judged(showing) },
            ),
          ];
        }),
      );
    // each verdict (after the judge's own answer, when it solves first) filed with the showing's truth, or none
    const file = (turns: Turn[], showing: string, truth?: string) => {
      for (const t of turns)
        emit({ ...t, task: t.compare === OWN_SCOPE ? own(showing, truth) : judged(showing, truth) });
    };
    const ask = async (shown: string[], truth: string, showing: string) => {
      for (const turns of await verdictsOn(shown, showing)) file(turns, showing, truth);
    };
    if (all) {
      // every answer is judged (its verdicts pay the solver), but only one right and one wrong answer carry the truth that
      // trains the judge: a weak solver's answers are mostly wrong, and a judge taught on them all learns to say 'n'
      const asked: { answer: Turn; k: number; verdicts: Turn[][] }[] = [];
      for (const [k, t] of answers.entries())
        if (t.action.valid) asked.push({ answer: t, k, verdicts: await verdictsOn([t.text], `a${k}`) });
      const yes = (a: (typeof asked)[number]) =>
        a.verdicts.filter((v) => v.at(-1)!.action.valid && v.at(-1)!.action.value === 'y').length;
      const wrongAsked = asked.filter((a) => !right.includes(a.answer));
      // 'fooling': the wrong answer that drew the most 'y' (a hard negative: the exploit a solver paid by this judge finds)
      const negative =
        this.options.negative === 'fooling'
          ? wrongAsked.reduce<(typeof asked)[number] | undefined>(
              (best, a) => (best === undefined || yes(a) > yes(best) ? a : best),
              undefined,
            )
          : wrongAsked[0];
      const positive = asked.find((a) => right.includes(a.answer));
      for (const a of asked) {
        const truth =
          positive && negative && (a === positive || a === negative) ? (a === positive ? 'y' : 'n') : undefined;
        for (const v of a.verdicts) file(v, `a${a.k}`, truth);
      }
      return;
    }
    // a planted slip of a right answer stands in for the solver's wrong one (a curriculum of the errors it rarely makes)
    const planted =
      this.options.plant > 0 && right.length && rng.next() < this.options.plant
        ? this.slip(task, right[0].text, rng)
        : undefined;
    // only tasks with a right and a wrong answer: the two verdicts' truths are balanced, so chance is 1/2
    if (!right.length || (!wrong.length && planted === undefined)) return;
    const w = planted ?? wrong[0].text;
    if (this.options.mode === 'pairwise') {
      const r = right[0].text;
      const rightFirst = rng.next() < 0.5;
      // both orders, the drawn one first: the second is the position-consistency check
      for (const first of [rightFirst, !rightFirst])
        await ask(first ? [r, w] : [w, r], first ? 'A' : 'B', first ? 'AB' : 'BA');
      return;
    }
    const r = right[0].text;
    for (const isRight of rng.next() < 0.5 ? [true, false] : [false, true])
      await ask([isRight ? r : w], isRight ? 'y' : 'n', isRight ? 'right' : 'wrong');
  }

  /** A slip of `answer` (digitSlip) that the family checks wrong; undefined when there is none. */
  private slip(task: Task, answer: string, rng: Rng): string | undefined {
    const out = digitSlip(answer, rng, this.options.slip);
    return out === undefined || this.family.verify(task, out) ? undefined : out;
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    const taught = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'judge' && t.task?.answer !== undefined));
    const verdicts = taught.filter((t) => t.compare !== OWN_SCOPE);
    const m: Record<string, number> = {
      'judge/judged_share': episodes.length
        ? episodes.filter((e) => e.turns.some((t) => t.role === 'judge')).length / episodes.length
        : 0,
    };
    if (!verdicts.length) return m;
    const owns = taught.filter((t) => t.compare === OWN_SCOPE);
    if (owns.length)
      m['judge/own_accuracy'] =
        owns.filter((t) => t.action.valid && t.action.value === t.task!.answer).length / owns.length;
    const said = (t: Turn) => (t.action.valid ? t.action.value : null);
    m['judge/accuracy'] = verdicts.filter((t) => said(t) === t.task!.answer).length / verdicts.length;
    m['judge/valid_rate'] = verdicts.filter((t) => t.action.valid).length / verdicts.length;
    const f1 = (positive: string) => {
      const tp = verdicts.filter((t) => said(t) === positive && t.task!.answer === positive).length;
      const fp = verdicts.filter((t) => said(t) === positive && t.task!.answer !== positive).length;
      const fn = verdicts.filter((t) => said(t) !== positive && t.task!.answer === positive).length;
      return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
    };
    if (this.options.mode === 'pointwise') {
      m['judge/f1'] = f1('n');
      if (!this.options.judgeAll) {
        // the pair read off two pointwise verdicts: the k-th verdict on the right answer is 'y' and the k-th on the wrong one 'n' (a tie is a miss)
        const pairs = episodes.flatMap((e) => {
          const on = (s: string) => e.turns.filter((t) => t.role === 'judge' && t.task?.id.endsWith(`/${s}`));
          const [r, w] = [on('right'), on('wrong')];
          return r.slice(0, w.length).map((t, k): number => (said(t) === 'y' && said(w[k]) === 'n' ? 1 : 0));
        });
        if (pairs.length) m['judge/pair_accuracy'] = pairs.reduce((a, b) => a + b, 0) / pairs.length;
      }
      if (this.options.judgeAll) {
        const d = peerDiagnostics(episodes, new Set(['solver']), (t, e) => this.family.verify(e.task, t.text));
        if (d.reward_truth_corr !== undefined) m['judge/reward_truth_corr'] = d.reward_truth_corr;
      }
      return m;
    }
    m['judge/f1'] = (f1('A') + f1('B')) / 2;
    // the same answer picked in both orders: 'A' on AB (the right one first) and 'B' on BA, or the reverse
    const pairs: number[] = [];
    for (const e of episodes) {
      const ab = e.turns.filter((t) => t.role === 'judge' && t.task?.id.endsWith('/AB'));
      const ba = e.turns.filter((t) => t.role === 'judge' && t.task?.id.endsWith('/BA'));
      for (let k = 0; k < Math.min(ab.length, ba.length); k++) {
        const [x, y] = [said(ab[k]), said(ba[k])];
        pairs.push(x !== null && y !== null && x !== y ? 1 : 0);
      }
    }
    if (pairs.length) m['judge/position_consistency'] = pairs.reduce((a, b) => a + b, 0) / pairs.length;
    return m;
  }
}

/**
 * `answer` with one of its digits, drawn at random, changed to another (never to a leading
 * zero): to any other digit, or with `change` 'adjacent' to one a step up or down (0 and 9 have
 * one neighbour); undefined when it has no digit.
 */
export function digitSlip(answer: string, rng: Rng, change: 'any' | 'adjacent' = 'any'): string | undefined {
  const digits = [...answer].flatMap((ch, i) => (ch >= '0' && ch <= '9' ? [i] : []));
  if (!digits.length) return undefined;
  const at = digits[rng.int(digits.length)];
  const leading = at === digits[0] && digits.length > 1;
  const near = (d: string) => change === 'any' || Math.abs(Number(d) - Number(answer[at])) === 1;
  const choices = '0123456789'.split('').filter((d) => d !== answer[at] && !(leading && d === '0') && near(d));
  return answer.slice(0, at) + choices[rng.int(choices.length)] + answer.slice(at + 1);
}
