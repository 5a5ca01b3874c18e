/**
 * The collapse watch every run keeps: after each iteration the detectors read the metrics so
 * far; their readings and flags go into that iteration's metrics (`collapse/*`), a flag onto
 * the progress line, and `stopOn: collapse` ends the run at the first. The best checkpoint by
 * the watched held-out metric is named in run.json and the report.
 */
import type { CheckpointRecord, MetricsRow, RunRecord, RunStore } from '../store/run.js';
import { DETECTORS, HELD_OUT, isRead, keysOf, type Detector } from './detectors.js';
import type { CollapseOptions } from './options.js';

/** A detector past its threshold at an iteration. */
export interface Finding {
  id: string;
  iteration: number;
  value: number;
  detail: string;
}

/** What one iteration's row adds to the watch. */
export interface Watched {
  /** `collapse/<metric>` readings, `collapse/<id>` 1 or 0 for each detector that could read, `collapse/flagged` how many flag */
  metrics: Record<string, number>;
  /** the detectors flagging at this row */
  flagged: Finding[];
  /** those of them flagging for the first time in the run */
  fresh: Finding[];
}

export class CollapseWatch {
  private readonly rows: MetricsRow[] = [];
  /** each detector's first flag */
  readonly first = new Map<string, Finding>();

  constructor(
    readonly options: CollapseOptions,
    private readonly detectors: readonly Detector[] = DETECTORS,
  ) {}

  /** Adds a row (an iteration's metrics, in order) and reads every detector on the rows so far. */
  observe(row: MetricsRow): Watched {
    this.rows.push(
      Object.fromEntries(Object.entries(row).filter(([k]) => k === 'iteration' || isRead(k))) as MetricsRow,
    );
    const metrics: Record<string, number> = {};
    const flagged: Finding[] = [];
    const fresh: Finding[] = [];
    for (const d of this.detectors) {
      const r = d.read(this.rows, this.options);
      if (!r) continue;
      metrics[`collapse/${d.metric}`] = r.value;
      metrics[`collapse/${d.id}`] = r.flagged ? 1 : 0;
      if (!r.flagged) continue;
      const f = { id: d.id, iteration: row.iteration, value: r.value, detail: r.detail };
      flagged.push(f);
      if (!this.first.has(d.id)) {
        this.first.set(d.id, f);
        fresh.push(f);
      }
    }
    metrics['collapse/flagged'] = flagged.length;
    return { metrics, flagged, fresh };
  }
}

/** Replays a run's rows through a watch, as the run saw them: each row's reading, in order. */
export function replay(rows: readonly MetricsRow[], o: CollapseOptions): { watch: CollapseWatch; watched: Watched[] } {
  const watch = new CollapseWatch(o);
  return { watch, watched: rows.map((r) => watch.observe(r)) };
}

/** The progress line's warning: which detectors flag now. */
export function warning(flagged: readonly Finding[]): string | undefined {
  return flagged.length ? `COLLAPSE: ${flagged.map((f) => f.id).join(', ')}` : undefined;
}

/** The held-out metric the best checkpoint is chosen by: `watch` if set, else eval/pass1, else the first held-out accuracy measured. */
export function watchedMetric(rows: readonly MetricsRow[], watch?: string): string | undefined {
  if (watch) return watch;
  const keys = keysOf(rows, (k) => HELD_OUT.test(k)).sort((a, b) => a.split('/').length - b.split('/').length);
  return keys[0];
}

/** The best checkpoint by a metric: its iteration, its folder (none for the starting weights, iteration 0), the value. */
export type BestCheckpoint = NonNullable<RunRecord['best']>;

/**
 * The checkpoint whose iteration measured `metric` highest (the earlier on ties: fewer updates
 * for the same figure), among the run's checkpoints and the starting weights (iteration 0).
 * Only iterations that measured it count, so a checkpoint between evaluations is never chosen.
 */
export function bestCheckpoint(
  rows: readonly MetricsRow[],
  checkpoints: readonly CheckpointRecord[],
  metric: string,
): BestCheckpoint | undefined {
  const saved = new Map<number, string | undefined>([
    [0, undefined],
    ...checkpoints.map((c) => [c.iteration, c.dir] as const),
  ]);
  let best: BestCheckpoint | undefined;
  for (const r of rows) {
    const v = r[metric];
    if (typeof v !== 'number' || !Number.isFinite(v) || !saved.has(r.iteration)) continue;
    if (!best || v > best.value) best = { metric, iteration: r.iteration, dir: saved.get(r.iteration), value: v };
  }
  return best;
}

/** Names the best checkpoint so far in run.json (after each checkpoint): nothing while the run measured no held-out metric. */
export async function recordBest(store: RunStore, rows: readonly MetricsRow[], watch?: string): Promise<void> {
  const metric = watchedMetric(rows, watch);
  const best = metric === undefined ? undefined : bestCheckpoint(rows, store.record.checkpoints, metric);
  if (best) await store.recordBest(best);
}

/** `stopOn: collapse`: records why the run ends here, and says so with the best checkpoint. */
export async function stopLine(store: RunStore, flagged: readonly Finding[]): Promise<string> {
  const [f] = flagged;
  await store.recordStop({
    on: 'collapse',
    iteration: f.iteration,
    detail: flagged.map((x) => `${x.id}: ${x.detail}`).join('; '),
  });
  return `stopOn collapse: the run ends at iteration ${f.iteration} (${flagged.map((x) => x.id).join(', ')}); ${describeBest(store.record.best)}`;
}

/** The best checkpoint in words, for the log and the report. */
export function describeBest(best: BestCheckpoint | undefined): string {
  if (!best) return 'no best checkpoint: no held-out metric was measured at a checkpoint';
  const where = best.dir ?? 'the starting weights (no update beat them)';
  return `best checkpoint by ${best.metric}: ${where}, iteration ${best.iteration}, ${best.value.toFixed(3)}`;
}
