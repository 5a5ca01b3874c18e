import type { Observable } from 'rxjs';
import { fromRun } from '../../src/core/operators/from-run.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { hashText } from '../../src/util/hash.js';
import { Rng } from '../../src/util/rng.js';
import { arenaOptions } from '../options.js';
import { judgeMetrics } from './metrics.js';
import { JudgeArenaOptionsSchema, OWN_SCOPE, type JudgeArenaOptions } from './options.js';
import { digitSlip } from './slips.js';
import { ownTruth } from '../../src/tasks/scratchpad.js';
import type { Arena, ArenaContext } from '../../src/core/arena.js';

/** An own turn's task with its truth: on a sum worked step by step, the judge's own right working in any order (ownTruth). */
function ownFiled(task: Task, t: Turn): Task {
  if (task.answer === undefined) return task;
  return { ...task, answer: ownTruth(task, t.text.trim())! };
}

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
 * the share of tasks that gave something to judge. With `answers: 'fixed'` no solver plays: the
 * task's answer and a slip of it are judged, as above (a held-out set in known shares).
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
    const fixed = this.options.answers === 'fixed';
    if (fixed && task.answer === undefined)
      throw new Error(`judge arena: answers 'fixed' needs task ${task.id}'s answer`);
    // judging every answer: each answer's turn is filed under its own id, shared with the verdicts on it
    const answers = await Promise.all(
      Array.from({ length: fixed ? 0 : this.options.candidates }, (_, k) =>
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
        emit({ ...t, task: t.compare === OWN_SCOPE ? ownFiled(own(showing, truth), t) : judged(showing, truth) });
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
      // plant: where the solver gave no wrong answer to teach with (a strong solver's usual case), a slip of the right one
      // stands in: judged apart, paying no one, so a judge that learns in the loop keeps seeing negatives
      const planted =
        !negative && positive && this.options.plant > 0 && rng.next() < this.options.plant
          ? this.slip(task, positive.answer.text, rng)
          : undefined;
      const taught = positive !== undefined && (negative !== undefined || planted !== undefined);
      for (const a of asked) {
        const truth = taught && (a === positive || a === negative) ? (a === positive ? 'y' : 'n') : undefined;
        for (const v of a.verdicts) file(v, `a${a.k}`, truth);
      }
      if (planted !== undefined) await ask([planted], 'n', 'planted');
      return;
    }
    // fixed: the task's answer and a slip of it; else a planted slip of a right answer stands in for the solver's wrong one (a curriculum of the errors it rarely makes)
    const planted = fixed
      ? this.slip(task, task.answer!, rng)
      : this.options.plant > 0 && right.length && rng.next() < this.options.plant
        ? this.slip(task, right[0].text, rng)
        : undefined;
    // only tasks with a right and a wrong answer: the two verdicts' truths are balanced, so chance is 1/2
    if (fixed ? planted === undefined : !right.length || (!wrong.length && planted === undefined)) return;
    const r = fixed ? task.answer! : right[0].text;
    const w = planted ?? wrong[0].text;
    if (this.options.mode === 'pairwise') {
      const rightFirst = rng.next() < 0.5;
      // both orders, the drawn one first: the second is the position-consistency check
      for (const first of [rightFirst, !rightFirst])
        await ask(first ? [r, w] : [w, r], first ? 'A' : 'B', first ? 'AB' : 'BA');
      return;
    }
    for (const isRight of rng.next() < 0.5 ? [true, false] : [false, true])
      await ask([isRight ? r : w], isRight ? 'y' : 'n', isRight ? 'right' : 'wrong');
  }

  /** A slip of `answer` (digitSlip) that the family checks wrong; undefined when there is none. */
  private slip(task: Task, answer: string, rng: Rng): string | undefined {
    const out = digitSlip(answer, rng, this.options.slip);
    return out === undefined || this.family.verify(task, out) ? undefined : out;
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    return judgeMetrics(episodes, this.options, this.family);
  }
}

export { JudgeArenaOptionsSchema, type JudgeArenaOptions } from './options.js';
export { digitSlip } from './slips.js';
