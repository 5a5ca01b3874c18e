import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExperimentInput } from '../../src/config/schema.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

/** What a run computed, without its timings. */
const results = (metrics: Record<string, unknown>[]) =>
  metrics.map((r) =>
    Object.fromEntries(
      Object.entries(r).filter(([k]) => /^(reward|losses|eval|rollout\/entropy|turns)/.test(k) && !/_s$/.test(k)),
    ),
  );

describe('a run of Hugging Face policies with worker-thread replicas', function () {
  this.timeout(240000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-hf-workers-'));
  const base = writeTinyHf(join(root, 'base'));
  after(() => rmSync(root, { recursive: true, force: true }));

  // two roles, each with its own adapter on one base; evaluated every iteration (through the same servers)
  const config = (workers: number, out: string): ExperimentInput =>
    ({
      name: 'hf-workers',
      seed: 5,
      backend: TEST_BACKEND,
      workers,
      iterations: 2,
      outDir: out,
      models: { main: { kind: 'hf', path: base, lora: { r: 2, alpha: 4 } } },
      roles: {
        proposer: { kind: 'proposer', model: 'main', adapter: 'proposer' },
        solver: { kind: 'solver', model: 'main', adapter: 'solver' },
      },
      tasks: {
        family: 'arithmetic',
        difficulty: { digits: 1, operands: 2, operators: '+' },
        train: { source: 'generate', count: 40 },
        eval: { source: 'generate', count: 4 },
        perIteration: 3,
      },
      arena: { kind: 'propose-solve', groupSize: 2, maxNewTokens: 4, temperature: 1, options: { attempts: 2 } },
      judges: [
        { kind: 'verifier', options: { role: 'solver' } },
        { kind: 'uncertainty', options: { role: 'proposer' } },
      ],
      trainer: { lr: 1e-2, entropyCoef: 0.1 },
      eval: { every: 1, samples: 2 },
    }) as ExperimentInput;

  it('repeats itself from its seed with a fixed worker count, each thread holding a replica of both adapters', async () => {
    const lines: string[] = [];
    const a = await runExperiment(config(2, join(root, 'a')), { out: join(root, 'a'), log: (l) => lines.push(l) });
    expect(lines.join('\n')).to.match(/workers: 2 threads, each with a replica of main-proposer, main-solver/);
    const b = await runExperiment(config(2, join(root, 'b')), { out: join(root, 'b'), log: () => {} });
    expect(results(a.metrics)).to.have.length(3); // iteration 0's evaluation, then two iterations
    expect(Object.keys(results(a.metrics)[2])).to.include.members(['losses/main-proposer/loss', 'eval/pass1']);
    expect(results(b.metrics)).to.deep.equal(results(a.metrics));
  });
});
