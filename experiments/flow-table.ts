/**
 * The flow study's table (docs/flow.md): per run of runs/flow, the held-out flow accuracy of the
 * untrained planner (iteration 0), its best and its last, with the first and second steps' rates
 * at the last evaluation; then per credit the mean and sample std over seeds of the last.
 *   npx tsx experiments/flow-table.ts [--dir runs/flow]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg } from './script.js';

const dir = arg('dir', 'runs/flow');
const last: Record<string, number[]> = {};
const f3 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(3));
console.log(
  '| run | iterations | untrained | best | last | first step | second step |\n| --- | --- | --- | --- | --- | --- | --- |',
);
for (const run of readdirSync(dir).sort()) {
  const file = join(dir, run, 'metrics.jsonl');
  if (!existsSync(file)) continue;
  const evals = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>)
    .filter((r) => r['eval/heldout/accuracy'] !== undefined);
  if (!evals.length) continue;
  const end = evals[evals.length - 1];
  const acc = evals.map((r) => r['eval/heldout/accuracy']);
  (last[run.replace(/-s\d+$/, '')] ??= []).push(end['eval/heldout/accuracy']);
  console.log(
    `| ${run} | ${end.iteration} | ${f3(acc[0])} | ${f3(Math.max(...acc))} | ${f3(acc[acc.length - 1])} | ${f3(end['eval/heldout/first_step'])} | ${f3(end['eval/heldout/second_step'])} |`,
  );
}
for (const [credit, xs] of Object.entries(last)) {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)) : NaN;
  console.log(`${credit}: last ${m.toFixed(3)} ± ${sd.toFixed(3)} over ${xs.length} seeds`);
}
