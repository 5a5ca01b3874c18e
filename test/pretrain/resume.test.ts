import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { jsonRows } from '../jsonl.js';
import { reportCommand } from '../../src/report/text.js';
import { runInfo } from '../../src/dashboard/runs.js';
import { chartGroups } from '../../src/report/groups.js';
import { loadModel } from '../../src/models/store.js';
import { RunStore } from '../../src/store/run.js';
import { TEST_BACKEND } from '../needs.js';

const bin = new URL('../../bin/coevolve.js', import.meta.url).pathname;

/** `coevolve pretrain ARGS` in its own process; SIGKILLed once `killWhen()` holds. Resolves to its stderr and whether it was killed. */
function pretrainProcess(args: string[], killWhen?: () => boolean): Promise<{ err: string; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'pretrain', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const timer = killWhen && setInterval(() => killWhen() && child.kill('SIGKILL'), 10);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearInterval(timer);
      if (signal === 'SIGKILL') resolve({ err, killed: true });
      else if (code !== 0) reject(new Error(`exit ${code}: ${err}`));
      else resolve({ err, killed: false });
    });
  });
}

const steps = (dir: string) => jsonRows<{ iteration: number }>(join(dir, 'metrics.jsonl')).map((r) => r.iteration);

const weights = async (out: string) => {
  const loaded = await loadModel(out);
  const w = loaded.model.variables().map((v) => Array.from(v.dataSync()));
  loaded.model.dispose();
  return w;
};

describe('pretrain is a run: SIGKILL and --resume', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-ptr-'));
  const config = (out: string) => ({
    name: 'resumable',
    seed: 5,
    backend: TEST_BACKEND,
    workers: 1,
    task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
    corpus: { train: 60, heldOut: 6 },
    model: { dModel: 16, nHeads: 2, nLayers: 1, context: 12 },
    train: { steps: 40, batchSize: 6, lr: 0.01 },
    evalEvery: 10,
    checkpointEvery: 4,
    maxNewTokens: 3,
    out,
    outDir: join(root, 'runs'),
  });

  it('a run killed between checkpoints and resumed writes the base an unkilled run writes, bit for bit', async () => {
    writeFileSync(join(root, 'whole.yaml'), stringify(config(join(root, 'whole'))));
    writeFileSync(join(root, 'killed.yaml'), stringify(config(join(root, 'killed'))));
    await pretrainProcess([join(root, 'whole.yaml')]);
    const run = join(root, 'runs', 'pretrain', 'killed');
    // killed once step 9 is logged: checkpoints at 4 and 8 are written, step 9's metrics are not durable
    const first = await pretrainProcess(['--out', run, join(root, 'killed.yaml')], () => steps(run).includes(9));
    expect(first.killed, first.err).to.equal(true);
    expect(existsSync(join(root, 'killed')), 'no base before training ends').to.equal(false);
    const second = await pretrainProcess(['--resume', run]);
    expect(second.err).to.match(/resuming .*killed from step (8|12)/);
    expect(await weights(join(root, 'killed'))).to.deep.equal(await weights(join(root, 'whole')));
    const store = await RunStore.open(run, { kind: 'pretrain' });
    expect(store.record.status).to.equal('done');
    expect(store.record.resumedAt).to.have.length(1);
    expect(store.kind).to.equal('pretrain');
    expect(store.planned).to.equal(40);
    // every step once, in order: what the kill left after the checkpoint was cut before the resume
    expect(steps(run)).to.deep.equal(Array.from({ length: 41 }, (_, i) => i));
    // only the two newest checkpoints are kept, each whole
    expect(store.record.checkpoints.map((c) => c.iteration)).to.deep.equal([36, 40]);
  });

  it('coevolve pretrain CONFIG resumes an unfinished run of the same config instead of starting over', async () => {
    writeFileSync(join(root, 'again.yaml'), stringify({ ...config(join(root, 'again')), name: 'again' }));
    const run = join(root, 'runs', 'pretrain', 'again');
    const first = await pretrainProcess([join(root, 'again.yaml')], () => steps(run).includes(5));
    expect(first.killed, first.err).to.equal(true);
    const second = await pretrainProcess([join(root, 'again.yaml')]);
    expect(second.err).to.match(/holds an unfinished pretrain of .*again\.yaml \(step 4\): resuming it/);
    expect(existsSync(`${run}-2`), 'no second run directory').to.equal(false);
    // the dashboard lists it and the report charts its loss and held-out accuracy
    const { info } = await runInfo(join(root, 'runs'), run);
    expect(info).to.include({ id: 'pretrain/again', name: 'again', status: 'done', iterations: 40, planned: 40 });
    const store = await RunStore.open(run, { kind: 'pretrain' });
    expect(chartGroups(store.readMetrics()).map((g) => g.id)).to.include.members(['accuracy', 'loss', 'time']);
    const table = await reportCommand(run);
    expect(table.split('\n')[0]).to.match(/^iteration\teval\/pass1\t/);
    expect(
      table
        .split('\n')
        .slice(1)
        .map((l) => Number(l.split('\t')[0])),
    ).to.deep.equal([0, 10, 20, 30, 40]);
  });

  it('refuses to open a pretrain run as an experiment, naming its kind', async () => {
    const run = join(root, 'runs', 'kinds');
    (await RunStore.create(run, { name: 'kinds' }, { kind: 'pretrain', planned: 3 })).close();
    const err = await RunStore.open(run).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/kinds is a pretrain run, not an experiment run$/);
    expect((await RunStore.open(run, { kind: 'any' })).planned).to.equal(3);
  });
});
