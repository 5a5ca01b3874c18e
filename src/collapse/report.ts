import type { MetricsRow, RunRecord } from '../store/run.js';
import { DETECTORS } from './detectors.js';
import type { CollapseOptions } from './options.js';
import { bestCheckpoint, describeBest, replay, watchedMetric } from './watch.js';

/**
 * The run report's collapse section: each detector's first flag (the iteration and what it
 * saw) or its last reading, why the run stopped early if it did, and the best checkpoint by the
 * watched held-out metric. Rebuilt by replaying the run's metrics through the watch with the
 * run's own settings, so it says what the run saw.
 */
export function collapseSection(rows: readonly MetricsRow[], record: Readonly<RunRecord>, o: CollapseOptions): string {
  const { watch, watched } = replay(rows, o);
  const lines = ['collapse watch (docs/collapse.md):'];
  for (const d of DETECTORS) {
    const first = watch.first.get(d.id);
    const last = [...watched].reverse().find((w) => w.metrics[`collapse/${d.metric}`] !== undefined);
    const reading = last?.metrics[`collapse/${d.metric}`];
    const now = last?.metrics[`collapse/${d.id}`] === 1 ? 'still flagged' : 'no longer flagged';
    lines.push(
      first
        ? `  ${d.id}: FLAGGED at iteration ${first.iteration} (${now} at the end): ${first.detail}`
        : `  ${d.id}: not flagged` +
            (reading === undefined ? ' (nothing to read)' : ` (last ${d.metric} ${reading.toFixed(3)})`),
    );
  }
  if (record.stopped)
    lines.push(`  stopped early at iteration ${record.stopped.iteration} (stopOn: ${record.stopped.on})`);
  // a run written before the watch named none: found the same way from its record
  const metric = watchedMetric(rows, o.watch);
  lines.push(
    `  ${describeBest(record.best ?? (metric ? bestCheckpoint(rows, record.checkpoints, metric) : undefined))}`,
  );
  return lines.join('\n');
}
