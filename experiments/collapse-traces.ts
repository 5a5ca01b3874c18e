// Writes the collapse watch's test traces (test/fixtures/collapse/*.jsonl): a run's
// metrics.jsonl cut to the columns the detectors read, so the recorded collapses replay in a
// unit test (test/collapse/traces.test.ts).
//   npx tsx experiments/collapse-traces.ts RUN_DIR OUT.jsonl [LAST_ITERATION]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HELD_OUT } from '../src/collapse/detectors.js';

const [dir, out, until] = process.argv.slice(2);
if (!dir || !out) throw new Error('usage: collapse-traces.ts RUN_DIR OUT.jsonl');
const read = /^reward\/|^rollout\/entropy$|(^|\/)(constant_verdict|top_cell_share)$/;
const kept = (k: string) => k === 'iteration' || HELD_OUT.test(k) || read.test(k);
const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Record<string, number>)
  .filter((r) => until === undefined || r.iteration <= Number(until)); // a run stopped early: up to its last evaluation
const cut = (v: number) => Number(v.toPrecision(3)); // three figures: the thresholds are far coarser
const lines = rows.map((r) =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(r)
        .filter(([k]) => kept(k))
        .map(([k, v]) => [k, cut(v)]),
    ),
  ),
);
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${out}: ${rows.length} rows`);
