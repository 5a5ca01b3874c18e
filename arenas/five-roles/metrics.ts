import type { Episode, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { OWN_SCOPE } from '../judge/options.js';
import { CHECK_SCOPE } from '../critic/protocol.js';
import type { BankOp } from './bank.js';

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const right = (t: Turn) => (t.action.valid && t.action.value === t.task?.answer ? 1 : 0);

/**
 * What each role did in an iteration of the five-roles arena, against the environment's truth
 * (none of it pays the solver): the solver's verified accuracy on proposed and on kept tasks,
 * the judge's verdict accuracy (on the taught ones), its y share on the solver's answers and its
 * n share on planted slips, the critic's step accuracy and its n share on wrong steps (all, and
 * planted ones), the manager's right operations and its mix, the proposals' valid rate.
 */
export function fiveRolesMetrics(episodes: readonly Episode[], family: TaskFamily<unknown>): Record<string, number> {
  const m: Record<string, number> = {};
  const turns = (role: string, keep: (t: Turn) => boolean = () => true) =>
    episodes.flatMap((e) => e.turns.filter((t) => t.role === role && keep(t)));
  const proposals = turns('proposer');
  if (proposals.length) m['proposals/valid_rate'] = mean(proposals.map((t) => (t.action.valid ? 1 : 0)));
  for (const [name, kept] of [
    ['proposed', false],
    ['kept', true],
  ] as const) {
    const attempts = episodes
      .filter((e) => e.task.id.startsWith('kept-') === kept)
      .flatMap((e) => e.turns.filter((t) => t.role === 'solver'));
    if (attempts.length)
      m[`solver/${name}_verified`] = mean(
        attempts.map((t) => (t.action.valid && family.verify(t.task!, t.text) ? 1 : 0)),
      );
  }
  // accuracies over the turns that carry their truth (a balanced share of them); the y share over all
  const judged = turns('judge', (t) => t.compare !== OWN_SCOPE);
  const isSlip = (t: Turn) => t.task!.id.endsWith('/slip');
  const verdicts = judged.filter((t) => !isSlip(t)); // on the solver's answers
  const taught = judged.filter((t) => t.task?.answer !== undefined);
  if (taught.length) m['judge/accuracy'] = mean(taught.map(right));
  if (verdicts.length) m['judge/y_share'] = mean(verdicts.map((t) => (t.action.value === 'y' ? 1 : 0)));
  const slips = judged.filter(isSlip); // judgePlant's, whether taught or not
  if (slips.length) m['judge/slip_found'] = mean(slips.map((t) => (t.action.value === 'n' ? 1 : 0)));
  const own = turns('judge', (t) => t.compare === OWN_SCOPE && t.task?.answer !== undefined); // paid ones (verdicts)
  if (own.length) m['judge/own_right'] = mean(own.map(right));
  const marks = turns('critic', (t) => t.compare !== CHECK_SCOPE && t.task?.answer !== undefined);
  if (marks.length) {
    m['critic/step_accuracy'] = mean(marks.map(right));
    const wrong = marks.filter((t) => t.task?.answer === 'n');
    if (wrong.length) m['critic/wrong_found'] = mean(wrong.map(right));
    const planted = wrong.filter((t) => t.task!.id.includes('/planted/'));
    if (planted.length) m['critic/planted_found'] = mean(planted.map(right));
  }
  const ops = episodes.flatMap((e) => (e.turns.some((t) => t.role === 'memory') ? [e] : []));
  if (ops.length) {
    m['memory/right_op'] = mean(ops.map((e) => (e.info?.right === true ? 1 : 0)));
    // how far the marks the manager reads agree with the answer (most attempts right or not)
    m['memory/marks_agree'] = mean(ops.map((e) => (e.info?.marked === e.info?.solved ? 1 : 0)));
    // re-rolled (managerRerollouts): the showings whose samples differ in outcome, the only ones that teach
    const outcomes = ops.map((e) =>
      e.turns.filter((t) => t.role === 'memory' && t.outcome != null).map((t) => t.outcome),
    );
    const rerolled = outcomes.filter((o) => o.length > 1);
    if (rerolled.length) m['memory/taught_showings'] = mean(rerolled.map((o) => (new Set(o).size > 1 ? 1 : 0)));
    for (const kind of ['ADD', 'UPDATE', 'DELETE', 'NOOP'])
      m[`memory/${kind.toLowerCase()}`] = mean(
        ops.map((e) => ((e.info?.op as BankOp | undefined)?.op === kind ? 1 : 0)),
      );
  }
  return m;
}
