import { RunStore } from '../store/run.js';

/**
 * `coevolve report DIR [--keys a,b]`: the curves of a run as a table, one row per
 * iteration that has any of the keys (evaluation rows by default), plus wall time.
 */
export async function reportCommand(dir: string, keys?: string[]): Promise<string> {
  const store = await RunStore.open(dir);
  const rows = store.readMetrics();
  const shown = keys ?? ['eval/pass1', ...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => /^eval\/maj/.test(k))))];
  const header = ['iteration', ...shown, 'elapsed_s'];
  let elapsed = 0;
  const lines = [header.join('\t')];
  for (const r of rows) {
    elapsed += Number(r['time/iteration_s'] ?? 0);
    if (!shown.some((k) => r[k] !== undefined)) continue;
    lines.push([r.iteration, ...shown.map((k) => fmt(r[k])), elapsed.toFixed(0)].join('\t'));
  }
  return lines.join('\n');
}

function fmt(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : '';
}
