import { expect } from 'chai';
import { startServe } from './serve-process.js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonRows } from '../jsonl.js';
import { parseConfig } from '../../src/config/load.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { RunStore } from '../../src/store/run.js';
import { TEST_BACKEND } from '../needs.js';

/** The hint arena of examples/: a local hinter that trains, and a frozen solver on the remote endpoint. */
const config = (root: string, url: string, iterations: number): ExperimentInput => ({
  name: 'remote',
  seed: 1,
  backend: TEST_BACKEND,
  workers: 1,
  iterations,
  outDir: root,
  checkpointEvery: 4,
  plugins: ['./examples/two-role-arena/hint.ts'],
  models: {
    hinter: { checkpoint: 'checkpoints/base-add2' },
    solver: { kind: 'remote', remote: { url, model: 'base-add2', retries: 1, timeoutMs: 3000 } },
  },
  roles: {
    hinter: { kind: 'hinter', model: 'hinter', maxNewTokens: 4 },
    solver: { kind: 'hinted-solver', model: 'solver', train: false },
  },
  tasks: {
    family: 'arithmetic',
    difficulty: { digits: 2, operands: 2, operators: '+' },
    train: { source: 'generate', count: 200 },
    perIteration: 4,
  },
  arena: { kind: 'hint', groupSize: 4, maxNewTokens: 4 },
  judges: [
    { kind: 'verifier', options: { role: 'solver' } },
    { kind: 'outcome', options: { role: 'hinter' } },
  ],
});

describe('a role on a remote endpoint', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-remote-'));

  it('plays in an arena; when the endpoint is killed mid-run its episodes fail, counted in the metrics, and the run goes on', async () => {
    const { url, child } = await startServe(['--role', 'solver']);
    const out = join(root, 'run');
    const metrics = join(out, 'metrics.jsonl');
    let killedAfter = 0;
    // kill the endpoint once two iterations are stored
    const watch = setInterval(() => {
      const rows = jsonRows<{ iteration: number }>(metrics);
      const last = rows[rows.length - 1]?.iteration ?? 0;
      if (last >= 2 && !killedAfter) {
        killedAfter = last;
        child.kill('SIGKILL');
      }
    }, 20);
    try {
      await runExperiment(config(root, url, 8), { out, log: () => {} });
    } finally {
      clearInterval(watch);
      child.kill('SIGKILL');
    }
    const rows = readFileSync(metrics, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((r) => r.iteration > 0);
    expect(rows.map((r) => r.iteration)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((await RunStore.open(out)).record.status).to.equal('done');
    const before = rows.filter((r) => r.iteration <= 2);
    for (const r of before) {
      expect(r['episodes/failed'], `iteration ${r.iteration}`).to.equal(0);
      expect(r['turns/solver']).to.equal(16); // the remote solver answered every episode
      expect(r['accuracy/train']).to.be.within(0, 1);
    }
    // the last iteration surely ran after the kill: every episode needs the solver, so all 16 failed
    const last = rows[rows.length - 1];
    expect(killedAfter).to.be.within(2, 7);
    expect(last['episodes/failed']).to.equal(16);
    expect(last['turns/solver'] ?? 0).to.equal(0);
  });

  it('refuses, before any work, an endpoint that does not answer, and a remote role that would train', async () => {
    const out = join(root, 'down');
    const err = await runExperiment(config(root, 'http://127.0.0.1:9/v1', 2), { out, log: () => {} }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/^models\.solver: the endpoint http:\/\/127\.0\.0\.1:9\/v1 does not answer/);
    expect(existsSync(out)).to.equal(false);
    const c = config(root, 'http://127.0.0.1:9/v1', 2);
    expect(() =>
      parseConfig({ ...c, roles: { ...c.roles, solver: { kind: 'hinted-solver', model: 'solver' } } }),
    ).to.throw(/roles\.solver\.train: model "solver" is remote \(inference only\): set train: false/);
    expect(() =>
      parseConfig({
        ...c,
        models: {
          ...c.models,
          solver: { kind: 'remote', checkpoint: 'x', remote: { url: 'http://127.0.0.1:9/v1', model: 'm' } },
        },
      }),
    ).to.throw(/models\.solver\.checkpoint: a remote model has no local weights/);
  });
});
