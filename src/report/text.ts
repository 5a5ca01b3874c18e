import { RunStore, type MetricsRow } from '../store/run.js';
import { collapseSection } from '../collapse/report.js';
import type { ExperimentConfig } from '../config/schema.js';

/** What proposer metrics a report shows beside the evaluations, averaged over the iterations since the row before. */
const PROPOSAL_KEYS = ['proposals/valid_rate', 'proposals/digits', 'proposals/distinct', 'proposals/solver_success'];

/**
 * `coevolve report DIR [--keys a,b]`: the curves of a run as a table, one row per
 * iteration that has any of the keys (every evaluation by default), plus wall time. With a
 * proposer, the default also shows what it wrote (validity, difficulty, diversity, the
 * solver's success on it), averaged over the iterations up to the row, so a proposer that
 * drifts or collapses shows in its difficulty and diversity columns. Then the collapse watch's
 * section (src/collapse/report.ts).
 */
export async function reportCommand(dir: string, keys?: string[]): Promise<string> {
  const store = await RunStore.open(dir, { kind: 'any' });
  const rows = store.readMetrics();
  const present = new Set(rows.flatMap((r) => Object.keys(r)));
  // a pretrain's evaluations are few and each its own measure (verdicts, a game's legal mass): all shown
  const evaluation = store.kind === 'pretrain' ? /^eval\// : /^eval\/(.+\/)?(pass1|maj\d+|valid)$/;
  const evals = [...present].filter((k) => evaluation.test(k)).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const shown = keys ?? evals;
  const averaged = keys ? [] : PROPOSAL_KEYS.filter((k) => present.has(k));
  const header = ['iteration', ...shown, ...averaged.map((k) => `${k} *`), 'elapsed_s'];
  let elapsed = 0;
  let window: MetricsRow[] = [];
  const lines = [header.join('\t')];
  for (const r of rows) {
    elapsed += Number(r['time/iteration_s'] ?? 0);
    window.push(r);
    if (!shown.some((k) => r[k] !== undefined)) continue;
    const means = averaged.map((k) => mean(window.map((w) => w[k]).filter((v): v is number => typeof v === 'number')));
    lines.push([r.iteration, ...shown.map((k) => fmt(r[k])), ...means.map(fmt), elapsed.toFixed(0)].join('\t'));
    window = [];
  }
  if (averaged.length) lines.push('* mean over the iterations since the row before');
  // an experiment's report says what the collapse watch saw (a pretrain has no rewards to watch)
  if (!keys && store.kind === 'experiment')
    lines.push('', collapseSection(rows, store.record, (store.config as ExperimentConfig).collapse));
  return lines.join('\n');
}

/** The unnamed evaluation first, then named ones. */
function rank(key: string): number {
  return key.split('/').length;
}

function mean(xs: number[]): number | undefined {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined;
}

function fmt(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : '';
}
