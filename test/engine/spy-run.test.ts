import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

const rows = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

describe('a spy run', function () {
  this.timeout(240000);

  it('trains both sides against a snapshot pool and measures them against uniform play and the frozen base', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-spy-'));
    const c = parse(readFileSync('configs/runs/spy/spy.yaml', 'utf8')) as ExperimentInput;
    Object.assign(c, { iterations: 2, outDir: root, backend: TEST_BACKEND, eval: { every: 2 }, checkpointEvery: 2 });
    c.tasks.perIteration = 4;
    c.opponents = { ...c.opponents!, snapshotEvery: 1 };
    c.evaluators = [{ kind: 'spy', name: 'spy', options: { games: 8 } }];
    writeFileSync(join(root, 'c.yaml'), stringify(c));
    await runCommand(join(root, 'c.yaml'), { set: [] });
    const [first, , last] = rows(join(root, 'spy'));
    // 4 deals x 2 games of 4 seats, a clue and a vote each (the snapshot's turns counted too)
    expect([last['turns/spy'], last['turns/civilian']]).to.deep.equal([8 * 2, 8 * 6]);
    expect(last['opponents/pool_size']).to.equal(2); // the base and iteration 1's snapshot, when iteration 2 played
    expect(last['rae/spy/baseline']).to.be.a('number').and.not.equal(0); // moved by iteration 1's spy turns
    for (const k of ['survival', 'vote_accuracy']) expect(last[`spy/vs_snapshot/${k}`]).to.be.within(0, 1);
    for (const row of [first, last])
      for (const k of ['self/survival', 'self/vote_accuracy', 'uniform/survival', 'uniform/vote_accuracy'])
        expect(row[`eval/spy/${k}`]).to.be.within(0, 1);
    expect(last['eval/spy/snapshot/valid_rate_civilian']).to.be.within(0, 1);
  });

  it('a model per side with re-rolled votes: each model trains on its own side, every vote sampled K times', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-spy-split-'));
    const c = parse(readFileSync('configs/runs/spy/spy-split.yaml', 'utf8')) as ExperimentInput;
    Object.assign(c, { iterations: 2, outDir: root, backend: TEST_BACKEND, eval: { every: 2 }, checkpointEvery: 2 });
    c.tasks.perIteration = 4;
    c.evaluators = [{ kind: 'spy', name: 'spy', options: { games: 8 } }];
    writeFileSync(join(root, 'c.yaml'), stringify(c));
    await runCommand(join(root, 'c.yaml'), { set: [] });
    const last = rows(join(root, 'spy-split')).at(-1)!;
    // 4 deals x 2 games: each seat's clue, and 4 votes from each seat
    expect([last['turns/spy'], last['turns/civilian']]).to.deep.equal([8 * 5, 8 * 15]);
    for (const m of ['spy', 'civ']) expect(last[`losses/${m}/loss`]).to.be.a('number');
    expect(last['eval/spy/snapshot/vote_accuracy']).to.be.within(0, 1);
  });
});
