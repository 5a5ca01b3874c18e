/**
 * One detector per collapse the project and the literature recorded. Each reads the run's
 * metrics rows up to now (metrics.jsonl as written, iteration 0 first) and returns its reading
 * (a number in its own unit, logged as `collapse/<metric>`), whether that reading is past its
 * threshold, and a sentence saying what it saw; or nothing while it has too little to read.
 * Pure functions of the rows, so a trace replays exactly as the run saw it (and a resumed run
 * rebuilds the watch from its metrics).
 */
import type { MetricsRow } from '../store/run.js';
import type { CollapseOptions } from './options.js';

export interface Reading {
  /** the number compared with the threshold */
  value: number;
  flagged: boolean;
  /** what was seen, for the log and the report */
  detail: string;
}

export interface Detector {
  /** the detector's name (`collapse/<id>` is 1 while it flags) */
  id: string;
  /** the metric its reading is logged as (`collapse/<metric>`) */
  metric: string;
  read(rows: readonly MetricsRow[], o: CollapseOptions): Reading | undefined;
}

/** The held-out accuracies the watch reads: the unnamed evaluation's pass@1, each evaluator's pass@1 or accuracy. */
export const HELD_OUT = /^eval\/([^/]+\/)?(pass1|accuracy)$/;
const REWARD = /^reward\//;
const VERDICT = /(^|\/)constant_verdict$/;
const CELL = /(^|\/)top_cell_share$/;
const ENTROPY = 'rollout/entropy';

/** Whether any detector reads `key` (the watch keeps only these, so a long run's reads stay cheap). */
export const isRead = (key: string) =>
  !key.startsWith('collapse/') &&
  (HELD_OUT.test(key) || REWARD.test(key) || VERDICT.test(key) || CELL.test(key) || key === ENTROPY);

/** The rows holding a finite `key`, as [iteration, value]. */
export function series(rows: readonly MetricsRow[], key: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const r of rows) {
    const v = r[key];
    if (typeof v === 'number' && Number.isFinite(v)) out.push([r.iteration, v]);
  }
  return out;
}

/** The keys of `rows` that `test` matches, sorted (so a reading names the same key every time); never the watch's own. */
export function keysOf(rows: readonly MetricsRow[], test: (k: string) => boolean): string[] {
  const keys = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) if (!k.startsWith('collapse/') && test(k)) keys.add(k);
  return [...keys].sort();
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);
const f3 = (x: number) => x.toFixed(3);

/** The values of `s` at iterations in (from, to]. */
function valuesIn(s: ReadonlyArray<[number, number]>, from: number, to: number): number[] {
  return s.filter(([i]) => i > from && i <= to).map(([, v]) => v);
}

/** The sample variance of the mean of `xs` (0 for one value). */
function varianceOfMean(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs)!;
  return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length;
}

/**
 * A reward's mean over `window` iterations up to `at` (or just after it, when nothing came
 * before: the start) against its mean over the window up to `now`, the two never overlapping;
 * `held` when the later mean is no lower than the earlier less two standard errors of their
 * difference (a flat reward holds; a falling one does not).
 */
function rewardTrend(s: ReadonlyArray<[number, number]>, at: number, now: number, window: number) {
  const from = valuesIn(s, at - window, at).length ? at : at + window;
  const [a, b] = [valuesIn(s, from - window, from), valuesIn(s, Math.max(now - window, from), now)];
  if (!a.length || !b.length) return undefined;
  const [before, after] = [mean(a)!, mean(b)!];
  const held = after >= before - 2 * Math.sqrt(varianceOfMean(a) + varianceOfMean(b));
  return { before, after, held };
}

/**
 * Held-out accuracy falling while the training reward rises or holds: label-free RL's
 * rise-then-fall (self-certainty, a majority vote past its use) and a solver paid by a judge
 * that cannot tell (its reward flat while its skill goes). For each held-out accuracy, its
 * latest measurement against its best (the latest best on ties): flagged when it fell by
 * `heldOut.drop` and by `heldOut.relative` of the best while some role's training reward,
 * averaged over the `heldOut.window` iterations up to now, did not fall below its mean over the
 * window at the best (see rewardTrend). A run whose reward falls with its held-out accuracy
 * is failing in another way (divergence), not fooling its reward. The reading is the largest fall.
 */
export const heldOutFalls: Detector = {
  id: 'held_out_falls',
  metric: 'held_out_drop',
  read(rows, o) {
    const { drop, relative, window } = o.heldOut;
    const rewards = keysOf(rows, (k) => REWARD.test(k)).map((k) => [k, series(rows, k)] as const);
    const readings = keysOf(rows, (k) => HELD_OUT.test(k)).flatMap((key): Reading[] => {
      const s = series(rows, key);
      if (s.length < 2) return [];
      const [now, latest] = s[s.length - 1];
      const [at, best] = s.reduce((b, p) => (p[1] >= b[1] ? p : b), s[0]);
      const fall = best - latest;
      // the reward where the best was measured (or just after it: a start has no reward before it) against now
      const held = rewards.flatMap(([r, rs]) => {
        const t = rewardTrend(rs, at, now, window);
        return t?.held ? [`${r} ${f3(t.before)} to ${f3(t.after)}`] : [];
      });
      return [
        {
          value: fall,
          flagged: fall >= drop && best > 0 && fall / best >= relative && held.length > 0,
          detail:
            `${key} ${f3(latest)} at ${now}, from its best ${f3(best)} at ${at}` +
            (held.length
              ? `, while the training reward held or rose: ${held.join(', ')}`
              : ', and every training reward fell with it'),
        },
      ];
    });
    // a flagged metric first, then the largest fall
    const [worst] = readings.sort((a, b) => Number(b.flagged) - Number(a.flagged) || b.value - a.value);
    return worst;
  },
};

/**
 * A judge giving the same verdict whatever it is shown: `constant_verdict` (the least share of
 * its most common verdict among the showings of either truth: 1 for a judge that says one thing
 * to everything, 0 for one that follows the truth), in training or held out. Flagged when the
 * last `verdict.patience` measurements of one such metric are all at least `verdict.share`.
 * The reading is the least of those last measurements, the highest over metrics.
 */
export const constantVerdict: Detector = {
  id: 'constant_verdict',
  metric: 'verdict_constancy',
  read(rows, o) {
    const { share, patience } = o.verdict;
    let worst: Reading | undefined;
    for (const key of keysOf(rows, (k) => VERDICT.test(k))) {
      const s = series(rows, key);
      if (s.length < patience) continue;
      const last = s.slice(-patience);
      const least = Math.min(...last.map(([, v]) => v));
      if (worst && least <= worst.value) continue;
      worst = {
        value: least,
        flagged: least >= share,
        detail: `${key} at least ${f3(least)} over its last ${patience} measurements (to iteration ${last[last.length - 1][0]})`,
      };
    }
    return worst;
  },
};

/**
 * A proposer stuck in one cell: `top_cell_share` (the share of its valid proposals in the most
 * common difficulty cell of the family's measure), averaged over the last `cell.window`
 * measurements; flagged at `cell.share` or above.
 */
export const oneCell: Detector = {
  id: 'one_cell',
  metric: 'cell_share',
  read(rows, o) {
    const { share, window } = o.cell;
    let worst: Reading | undefined;
    for (const key of keysOf(rows, (k) => CELL.test(k))) {
      const s = series(rows, key);
      if (s.length < window) continue;
      const m = mean(s.slice(-window).map(([, v]) => v))!;
      if (worst && m <= worst.value) continue;
      worst = {
        value: m,
        flagged: m >= share,
        detail: `${key} ${f3(m)} on average over its last ${window} measurements`,
      };
    }
    return worst;
  },
};

/**
 * The policy's entropy collapsing: the mean rollout entropy (nats per sampled token) over the
 * last `entropy.window` iterations against its mean over the first `entropy.window`; flagged
 * when it fell to `entropy.ratio` of it or below. Read once the two windows no longer overlap.
 * The reading is the ratio.
 */
export const entropyCollapse: Detector = {
  id: 'entropy_collapse',
  metric: 'entropy_ratio',
  read(rows, o) {
    const { ratio, window } = o.entropy;
    const s = series(rows, ENTROPY);
    if (s.length < 2 * window) return undefined;
    const start = mean(s.slice(0, window).map(([, v]) => v))!;
    const now = mean(s.slice(-window).map(([, v]) => v))!;
    if (!(start > 0)) return undefined;
    const r = now / start;
    return {
      value: r,
      flagged: r <= ratio,
      detail: `${ENTROPY} ${f3(now)} over the last ${window} iterations, ${f3(r)} of its ${f3(start)} over the first ${window}`,
    };
  },
};

/** Every detector, in the order the log and the report name them. */
export const DETECTORS: readonly Detector[] = [heldOutFalls, constantVerdict, oneCell, entropyCollapse];
