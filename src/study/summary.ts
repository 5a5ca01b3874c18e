import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Study } from './schema.js';
import { runStatus, studyRuns } from './run.js';

/** A run's curve of one metric: [iteration, value] wherever it was logged. */
export function curve(dir: string, key: string): [number, number][] {
  const f = join(dir, 'metrics.jsonl');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8')
    .split('\n')
    .flatMap((l) => {
      if (!l.trim()) return [];
      try {
        const r = JSON.parse(l) as Record<string, unknown>;
        return typeof r[key] === 'number' ? [[r.iteration as number, r[key] as number] as [number, number]] : [];
      } catch {
        return []; // a torn last line of a killed run
      }
    });
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** the sample standard deviation (n - 1), 0 for one value */
const sd = (xs: readonly number[]) =>
  xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)) : 0;
/** three decimals, or three significant figures below 0.1 (an exploitability of 0.0356 is not 0.036) */
export const f3 = (x: number) =>
  !Number.isFinite(x) ? '' : x !== 0 && Math.abs(x) < 0.1 ? x.toPrecision(3) : x.toFixed(3);

/** One condition's figures over its finished seeds. */
export interface ConditionSummary {
  condition: string;
  metric: string;
  seeds: number[];
  /** each finished seed's figure: the mean of its last `last` measurements */
  values: number[];
  /** the metric's first measurement, averaged over the seeds (the start every condition shares) */
  start: number;
  also: Record<string, number>;
}

/** Every condition with at least one finished run, measured as the study says. */
export function summarise(s: Study): ConditionSummary[] {
  const out: ConditionSummary[] = [];
  for (const condition of Object.keys(s.conditions)) {
    const runs = studyRuns(s, [condition]).filter((r) => runStatus(r.dir) === 'done');
    if (!runs.length) continue;
    const metric = s.conditions[condition].metric ?? s.metric;
    const lastMean = (dir: string, key: string) =>
      mean(
        curve(dir, key)
          .slice(-s.last)
          .map(([, v]) => v),
      );
    out.push({
      condition,
      metric,
      seeds: runs.map((r) => r.seed),
      values: runs.map((r) => lastMean(r.dir, metric)),
      start: mean(runs.map((r) => curve(r.dir, metric)[0]?.[1] ?? NaN)),
      also: Object.fromEntries(s.also.map((k) => [k, mean(runs.map((r) => lastMean(r.dir, k)))])),
    });
  }
  return out;
}

/** The summary as a Markdown table: one row per condition, mean ± sd over seeds and each seed's figure. */
export function summaryTable(s: Study): string {
  const rows = summarise(s);
  const last = s.last === 1 ? 'at the end' : `last ${s.last} measurements`;
  return [
    `| condition | metric | seeds | first | ${last} (mean ± sd) | by seed |${s.also.map((k) => ` ${k} |`).join('')}`,
    `| --- | --- | --- | --- | --- | --- |${s.also.map(() => ' --- |').join('')}`,
    ...rows.map(
      (r) =>
        `| ${r.condition} | ${r.metric} | ${r.seeds.join(', ')} | ${f3(r.start)} | ${f3(mean(r.values))} ± ${f3(sd(r.values))} ` +
        `| ${r.values.map(f3).join(', ')} |${s.also.map((k) => ` ${f3(r.also[k])} |`).join('')}`,
    ),
  ].join('\n');
}
