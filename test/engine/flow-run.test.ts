import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

/** A shipped flow config cut to two small iterations, on a fresh tiny model in place of the base. */
function flowRun(file: string, out: string): string {
  const c = parse(readFileSync(file, 'utf8')) as ExperimentInput;
  Object.assign(c, { iterations: 2, outDir: out, workers: 1, backend: TEST_BACKEND, eval: { every: 2 } });
  c.models = { main: { config: { dModel: 8, nHeads: 2, nLayers: 1, context: 40 } } };
  c.tasks.perIteration = 2;
  c.arena!.groupSize = 4;
  const path = join(out, 'c.yaml');
  writeFileSync(path, stringify(c));
  return path;
}

type Stored = { outcome: { planner: number }; turns: { role: string; outcome?: number | null; advantage?: number }[] };
const read = (dir: string, file: string) =>
  readFileSync(join(dir, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('a flow run', function () {
  this.timeout(240000);

  for (const [config, name] of [
    ['broadcast', 'flow-broadcast'],
    ['final', 'flow-final'],
  ]) {
    it(`${config}: trains the planner alone and measures the flow on the held-out sums`, async () => {
      const root = mkdtempSync(join(tmpdir(), 'coevolve-flow-'));
      await runCommand(flowRun(`configs/runs/flow/${config}.yaml`, root), { set: [] });
      const dir = join(root, name);
      const last = read(dir, 'metrics.jsonl').find((r) => r.iteration === 2);
      expect(last['losses/main/loss']).to.be.a('number');
      for (const k of ['flow/accuracy', 'eval/heldout/accuracy', 'eval/heldout/valid_rate'])
        expect(last[k], k).to.be.within(0, 1);
      const episodes: Stored[] = read(dir, join('episodes', readdirSync(join(dir, 'episodes')).sort()[0]));
      expect(episodes).to.have.length(16); // both iterations: 2 sums x 4 flows
      for (const e of episodes) {
        expect(e.turns.every((t) => t.role === 'planner')).to.equal(true);
        // broadcast: no turn opts out; final: all but the last do
        const paid = e.turns.map((t) => t.outcome !== null);
        expect(paid).to.deep.equal(e.turns.map((_, i) => config === 'broadcast' || i === e.turns.length - 1));
        // the turns paid are the turns trained
        expect(e.turns.map((t) => typeof t.advantage === 'number')).to.deep.equal(paid);
      }
    });
  }
});
