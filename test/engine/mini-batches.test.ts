import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import { miniBatches } from '../../src/engine/loop-parts.js';
import { tinyConfig } from './fixtures.js';

describe('mini-batches (verl ppo_mini_batch_size)', () => {
  const xs = Array.from({ length: 10 }, (_, i) => i);

  it('cuts a seeded shuffle into near-equal parts that hold every sample once', () => {
    const parts = miniBatches(xs, 3, 7);
    expect(parts.map((p) => p.length)).to.deep.equal([3, 3, 4]);
    expect(parts.flat().sort((a, b) => a - b)).to.deep.equal(xs);
    expect(parts.flat()).to.not.deep.equal(xs); // shuffled, so a part is not a run of neighbours (one role, one episode)
    expect(miniBatches(xs, 3, 7)).to.deep.equal(parts); // the same seed, the same parts: a resumed run replays them
    expect(miniBatches(xs, 3, 8)).to.not.deep.equal(parts);
  });

  it('keeps the batch whole for one part, and never makes an empty part', () => {
    expect(miniBatches(xs, 1, 7)).to.deep.equal([xs]);
    expect(miniBatches(xs.slice(0, 2), 5, 7).map((p) => p.length)).to.deep.equal([1, 1]);
  });

  it('takes one optimizer step per part: the same rollouts, different weights after the update', async function () {
    this.timeout(120000);
    const out = mkdtempSync(join(tmpdir(), 'coevolve-mb-'));
    // an entropy bonus gives a gradient whatever the untrained model's rewards are
    const entropy: number[][] = [];
    for (const parts of [1, 4]) {
      const path = join(out, `c${parts}.yaml`);
      writeFileSync(
        path,
        stringify(
          tinyConfig(out, {
            name: `mb${parts}`,
            iterations: 2,
            workers: 1,
            trainer: { lr: 1e-2, miniBatches: parts, entropyCoef: 0.1 },
          }),
        ),
      );
      await runCommand(path, { set: [] });
      const rows = readFileSync(join(out, `mb${parts}`, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      entropy.push(rows.filter((r) => r.iteration > 0).map((r) => r['rollout/entropy']));
    }
    // iteration 1 rolls out from the same start; iteration 2 from weights that took 1 or 4 steps
    expect(entropy[1][0]).to.equal(entropy[0][0]);
    const rollouts = (parts: number) =>
      readFileSync(join(out, `mb${parts}`, 'episodes', 'shard-000000.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((e) => e.iteration === 2)
        .map((e) => e.turns[0].logProbs);
    expect(rollouts(4)).to.not.deep.equal(rollouts(1));
  });
});
