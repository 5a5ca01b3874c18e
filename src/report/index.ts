import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { reportCommand } from './text.js';
import { createProgress, type ProgressStream } from '../progress/index.js';
import { RunStore } from '../store/run.js';
import { chartGroups } from './groups.js';
import { reportHtml, type RunSummary } from './html.js';
import { chartSpec, toPng, toSvg, type RunSeries } from './render.js';

export { chartGroups, type ChartGroup } from './groups.js';

/** What a written report holds: the page and each chart's files. */
export interface WrittenReport {
  html: string;
  charts: Array<{ id: string; title: string; svg: string; png: string }>;
}

/**
 * Writes a report of `dirs` (runs, read only) to `out`: `index.html`, self-contained, and each
 * chart as `<id>.svg` and `<id>.png`. Runs overlay on every chart, each series labelled by its
 * run (the folder name, or its path when two share a name). Progress goes to `stream`.
 */
export async function writeReport(
  dirs: readonly string[],
  out: string,
  o: { stream?: ProgressStream } = {},
): Promise<WrittenReport> {
  if (dirs.length === 0) throw new Error('report: give at least one run directory');
  const labels = dirs.map((d) => basename(resolve(d)));
  const unique = (d: string, i: number) => (labels.filter((l) => l === labels[i]).length > 1 ? d : labels[i]);
  const runs: Array<RunSeries & { summary: RunSummary }> = [];
  for (const [i, dir] of dirs.entries()) {
    const store = await RunStore.open(dir, { kind: 'any' });
    const rows = store.readMetrics();
    const label = unique(dir, i);
    runs.push({
      label,
      rows,
      summary: {
        label,
        dir,
        name: store.name,
        status: store.record.status,
        iterations: store.record.iterations,
        planned: store.planned,
        updatedAt: store.record.updatedAt,
        table: await reportCommand(dir),
      },
    });
  }
  const groups = chartGroups(runs.flatMap((r) => r.rows));
  if (groups.length === 0) throw new Error(`report: no metrics to chart in ${dirs.join(', ')}`);
  mkdirSync(out, { recursive: true });
  const progress = createProgress(groups.length, { stream: o.stream, label: 'report', unit: 'chart' });
  const charts: WrittenReport['charts'] = [];
  const inline: string[] = [];
  for (const [i, g] of groups.entries()) {
    const id = g.id.replace(/[^A-Za-z0-9_-]/g, '_');
    const svg = await toSvg(chartSpec(g, runs));
    const files = { svg: join(out, `${id}.svg`), png: join(out, `${id}.png`) };
    writeFileSync(files.svg, svg);
    writeFileSync(files.png, toPng(svg));
    charts.push({ id, title: g.title, ...files });
    inline.push(svg);
    progress.tick(i + 1);
  }
  progress.done();
  const html = join(out, 'index.html');
  writeFileSync(
    html,
    reportHtml(
      runs.map((r) => r.summary),
      charts.map((c, i) => ({ id: c.id, title: c.title, svg: inline[i] })),
    ),
  );
  return { html, charts };
}
