/**
 * The flow study's table (docs/flow.md): per run of runs/flow, the held-out flow accuracy,
 * greedy (`heldout`) and sampled at temperature 1 (`sampled`), of the untrained planner
 * (iteration 0) and at the last evaluation, with the sampled first and second steps' rates at
 * both; then per credit the mean and sample std over seeds of the last.
 *   npx tsx experiments/flow-table.ts [--dir runs/flow]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arg } from './script.js';

const dir = arg('dir', 'runs/flow');
const last: Record<string, { greedy: number[]; sampled: number[] }> = {};
const f3 = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(3));
const stats = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1)) : NaN;
  return `${m.toFixed(3)} ± ${sd.toFixed(3)}`;
};
console.log(
  '| run | iterations | greedy, untrained | greedy, last | sampled, untrained | sampled, last | sampled first step, untrained / last | sampled second step, untrained / last |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const run of readdirSync(dir).sort()) {
  const file = join(dir, run, 'metrics.jsonl');
  if (!existsSync(file)) continue;
  const evals = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>)
    .filter((r) => r['eval/heldout/accuracy'] !== undefined);
  if (!evals.length) continue;
  const [start, end] = [evals[0], evals[evals.length - 1]];
  const credit = (last[run.replace(/-s\d+$/, '')] ??= { greedy: [], sampled: [] });
  credit.greedy.push(end['eval/heldout/accuracy']);
  credit.sampled.push(end['eval/sampled/accuracy']);
  const s = (r: Record<string, number>, k: string) => f3(r[`eval/sampled/${k}`]);
  const cells = [
    run,
    end.iteration,
    f3(start['eval/heldout/accuracy']),
    f3(end['eval/heldout/accuracy']),
    s(start, 'accuracy'),
    s(end, 'accuracy'),
    `${s(start, 'first_step')} / ${s(end, 'first_step')}`,
    `${s(start, 'second_step')} / ${s(end, 'second_step')}`,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}
for (const [credit, xs] of Object.entries(last))
  console.log(
    `${credit}: last greedy ${stats(xs.greedy)}, sampled ${stats(xs.sampled)} over ${xs.greedy.length} seeds`,
  );
