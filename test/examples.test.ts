import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runExperiment } from '../src/engine/experiment.js';
import { pretrain, PretrainSchema } from '../src/pretrain/index.js';
import type { MetricsRow } from '../src/store/run.js';
import { TEST_BACKEND } from './needs.js';

// Every example in examples/ runs here, briefly (two iterations on the cpu backend): an
// example that stops working fails the suite, and a new one without a check below does too.
describe('examples', function () {
  this.timeout(300000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-examples-'));
  const brief = ['iterations=2', `backend=${TEST_BACKEND}`, 'workers=1', 'checkpointEvery=2', 'eval.every=2'];
  const run = async (name: string, set: string[] = []): Promise<MetricsRow> => {
    const { metrics } = await runExperiment(`examples/${name}/config.yaml`, {
      set: [...brief, ...set],
      out: join(root, name),
      log: () => {},
    });
    return metrics.find((r) => r.iteration === 2)!;
  };
  const checks: Record<string, () => Promise<void>> = {
    'custom-judge': async () => {
      const last = await run('custom-judge');
      // the verifier pays 1 for a right answer and the plugin's closeness adds half its e^-|error|, so reward exceeds accuracy
      expect(last['reward/solver']).to.be.above(last['accuracy/train'] as number);
    },
    'two-role-arena': async () => {
      const last = await run('two-role-arena');
      expect(last['turns/hinter']).to.equal(last['turns/solver']);
      expect(last['hint/silent']).to.be.within(0, 1);
      expect(last['reward/hinter']).to.equal(last['accuracy/train']); // the hinter earns whether its solver was right
    },
    'task-family': async () => {
      const config = PretrainSchema.parse({
        ...parse(readFileSync('examples/task-family/pretrain.yaml', 'utf8')),
        out: join(root, 'base-compare'),
        outDir: join(root, 'runs'),
        backend: TEST_BACKEND,
        workers: 1,
      });
      const base = await pretrain({ ...config, train: { ...config.train, steps: 20 } }, { log: () => {} });
      expect(base.heldOut?.tasks).to.equal(128);
      const last = await run('task-family', [`models.main.checkpoint=${base.checkpoint}`]);
      expect(last['eval/pass1']).to.be.within(0, 1);
    },
    drive: async () => {
      const out = join(root, 'drive');
      const stdout = execFileSync(
        process.execPath,
        ['--import', 'tsx', 'examples/drive/drive.ts', '--iterations', '2', '--out', out],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(result).to.include({ dir: out, iteration: 2 });
      expect(result.pass1).to.be.within(0, 1);
      expect(existsSync(join(out, 'metrics.jsonl'))).to.equal(true);
    },
  };

  it('has a check for every example', () => {
    expect(
      readdirSync('examples', { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort(),
    ).to.deep.equal(Object.keys(checks).sort());
  });
  for (const [name, check] of Object.entries(checks)) it(`runs ${name}`, check);
});
