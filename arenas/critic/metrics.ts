import type { Episode, Turn } from '../../src/core/types.js';
import { rightResults, stepResults, sumOperands } from '../../src/tasks/scratchpad.js';
import { CHECK_SCOPE } from './protocol.js';
import { constantVerdict } from '../../src/util/verdicts.js';

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
 * `critic/constant_verdict` is how far it gives one verdict whatever it is shown (the judge's
 * measure, each showing's truth its first wrong step or '0'), which the collapse watch reads:
 * measured, a critic from a base marking at chance passed everything within 25 iterations.
 */
export function criticMetrics(episodes: readonly Episode[]): Record<string, number> {
  const m: Record<string, number> = {};
  const share = <T>(xs: T[], f: (x: T) => boolean) => xs.filter(f).length / xs.length;
  const asked = episodes.flatMap((e) => {
    const info = e.info as { truth?: string; verdicts?: Record<string, (string | null)[]> } | undefined;
    return Object.entries(info?.verdicts ?? {}).flatMap(([showing, vs]) =>
      vs.map((v) => {
        const truth = showing === 'planted' ? info!.truth! : '0';
        return { showing, said: v, truth, right: v === truth, valid: v !== null };
      }),
    );
  });
  if (asked.length) {
    const same = constantVerdict(asked);
    if (same !== undefined) m['critic/constant_verdict'] = same;
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
    if (played.length) m['sneaky/win_rate'] = played.filter((e) => (e.outcome?.sneaky ?? 0) > 0).length / played.length;
  }
  return m;
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
