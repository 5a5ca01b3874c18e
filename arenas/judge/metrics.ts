import type { Episode, Turn } from '../../src/core/types.js';
import type { TaskFamily } from '../../src/core/task-family.js';
import { peerDiagnostics } from '../../judges/peer.js';
import { OWN_SCOPE, type JudgeArenaOptions } from './options.js';
import { constantVerdict } from '../../src/util/verdicts.js';

/**
 * The judge's rollout metrics: its accuracy, valid rate and F1 (pairwise the mean of both
 * letters' F1; pointwise F1 of flagging a wrong answer), position consistency (pairwise),
 * pair accuracy (pointwise), its own answers' accuracy (solveFirst), how constant its
 * verdict is (`constant_verdict`, below), and the share of episodes that gave something to judge.
 */
export function judgeMetrics(
  episodes: readonly Episode[],
  options: JudgeArenaOptions,
  family: TaskFamily<unknown>,
): Record<string, number> {
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
  const same = constantVerdict(verdicts.map((t) => ({ said: said(t), truth: t.task!.answer! })));
  if (same !== undefined) m['judge/constant_verdict'] = same;
  const f1 = (positive: string) => {
    const tp = verdicts.filter((t) => said(t) === positive && t.task!.answer === positive).length;
    const fp = verdicts.filter((t) => said(t) === positive && t.task!.answer !== positive).length;
    const fn = verdicts.filter((t) => said(t) !== positive && t.task!.answer === positive).length;
    return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
  };
  if (options.mode === 'pointwise') {
    m['judge/f1'] = f1('n');
    if (!options.judgeAll) {
      // the pair read off two pointwise verdicts: the k-th verdict on the right answer is 'y' and the k-th on the wrong one 'n' (a tie is a miss)
      const pairs = episodes.flatMap((e) => {
        const on = (s: string) => e.turns.filter((t) => t.role === 'judge' && t.task?.id.endsWith(`/${s}`));
        const [r, w] = [on('right'), on('wrong')];
        return r.slice(0, w.length).map((t, k): number => (said(t) === 'y' && said(w[k]) === 'n' ? 1 : 0));
      });
      if (pairs.length) m['judge/pair_accuracy'] = pairs.reduce((a, b) => a + b, 0) / pairs.length;
    }
    if (options.judgeAll) {
      const d = peerDiagnostics(episodes, new Set(['solver']), (t, e) => family.verify(e.task, t.text));
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
