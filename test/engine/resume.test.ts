import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { jsonRows } from '../jsonl.js';
import { lrMultiplier } from '../../src/rl/schedule.js';
import { tinyConfig } from './fixtures.js';

const bin = new URL('../../bin/coevolve.js', import.meta.url).pathname;

function run(args: string[], killWhen?: (dir: string) => boolean, dir?: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'run', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer =
      killWhen &&
      setInterval(() => {
        if (killWhen(dir!)) child.kill('SIGKILL');
      }, 20);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearInterval(timer);
      if (code && code !== 0) reject(new Error(`exit ${code}: ${err}`));
      else resolve(signal === 'SIGKILL' ? null : code);
    });
  });
}

const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
    : [];
const iterations = (dir: string) => jsonRows<{ iteration: number }>(join(dir, 'metrics.jsonl')).map((r) => r.iteration);

describe('run --resume after SIGKILL', function () {
  this.timeout(120000);

  it('continues from the last checkpoint: no iteration lost, none counted twice', async () => {
    const out = mkdtempSync(join(tmpdir(), 'coevolve-resume-'));
    const path = join(out, 'c.yaml');
    const lrSchedule = { kind: 'cosine' as const, warmup: 5, minRatio: 0.1 };
    writeFileSync(
      path,
      stringify(tinyConfig(out, { iterations: 40, checkpointEvery: 3, trainer: { lr: 1e-3, lrSchedule } })),
    );
    const dir = join(out, 'tiny');
    const killed = await run([path], (d) => iterations(d).some((i) => i >= 7), dir);
    expect(killed, 'the run should have been killed mid-way').to.equal(null);
    const before = iterations(dir);
    expect(Math.max(...before)).to.be.lessThan(40);
    await run(['--resume', dir]);
    const its = iterations(dir);
    expect(its).to.deep.equal(Array.from({ length: 41 }, (_, i) => i));
    // the schedule follows the iteration, so the resumed part continues it rather than restarting
    const lrs = lines(join(dir, 'metrics.jsonl'))
      .map((l) => JSON.parse(l))
      .filter((m) => m.iteration > 0)
      .map((m) => m.lr);
    lrs.forEach((lr, i) => expect(lr).to.be.closeTo(1e-3 * lrMultiplier(lrSchedule, i, 40), 1e-15));
    const episodes = readdirSync(join(dir, 'episodes')).flatMap((f) =>
      lines(join(dir, 'episodes', f)).map((l) => JSON.parse(l)),
    );
    const perIteration = new Map<number, number>();
    for (const e of episodes) perIteration.set(e.iteration, (perIteration.get(e.iteration) ?? 0) + 1);
    expect([...perIteration.keys()].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    expect([...perIteration.values()].every((n) => n === 16)).to.equal(true);
    const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    expect(record.status).to.equal('done');
    expect(record.iterations).to.equal(40);
    expect(record.resumedAt.length).to.equal(2);
    expect(record.resumedAt[1]).to.be.greaterThan(0);
  });
});

describe('run --resume with a synced reference (trainer.refSync)', function () {
  this.timeout(180000);

  // with replicas in worker threads too: batches are then cut the same way on every run
  for (const workers of [1, 2])
    it(`restores the moved reference: the KL curve matches an uninterrupted run, bit for bit (${workers} worker${workers > 1 ? 's' : ''})`, async () => {
      const out = mkdtempSync(join(tmpdir(), 'coevolve-refsync-'));
      const config = (name: string) =>
        tinyConfig(out, {
          name,
          workers,
          iterations: 16,
          checkpointEvery: 3,
          models: { main: { config: { dModel: 16, nHeads: 2, nLayers: 1, context: 24 }, reference: true } },
          trainer: { lr: 1e-2, klCoef: 0.5, entropyCoef: 0.05, refSync: { steps: 4, mixupAlpha: 1 } }, // the entropy term moves a policy that earns no reward yet
        });
      const metrics = (dir: string) =>
        lines(join(dir, 'metrics.jsonl'))
          .map((l) => JSON.parse(l))
          .filter((m) => m.iteration > 0);
      writeFileSync(join(out, 'whole.yaml'), stringify(config('whole')));
      await run([join(out, 'whole.yaml')]);
      const whole = metrics(join(out, 'whole'));
      // right after a hard sync the policy is its reference, so the KL is zero there and only there
      for (const m of whole) {
        if ((m.iteration - 1) % 4 === 0) expect(m['kl/main'], `iteration ${m.iteration}`).to.be.below(1e-6);
        else expect(m['kl/main'], `iteration ${m.iteration}`).to.be.above(1e-6);
      }
      expect(whole.filter((m) => m.ref_synced === 1).map((m) => m.iteration)).to.deep.equal([4, 8, 12, 16]);
      writeFileSync(join(out, 'cut.yaml'), stringify(config('cut')));
      const dir = join(out, 'cut');
      // killed after iteration 10: the last checkpoint (9) holds the reference synced at 8
      expect(await run([join(out, 'cut.yaml')], (d) => iterations(d).some((i) => i >= 10), dir)).to.equal(null);
      await run(['--resume', dir]);
      const cut = metrics(dir);
      expect(cut.map((m) => m.iteration)).to.deep.equal(whole.map((m) => m.iteration));
      cut.forEach((m, i) => expect(m['kl/main'], `iteration ${m.iteration}`).to.equal(whole[i]['kl/main']));
      cut.forEach((m, i) =>
        expect(m['losses/main/loss'], `iteration ${m.iteration}`).to.equal(whole[i]['losses/main/loss']),
      );
    });
});

describe('run --resume before the first checkpoint', function () {
  this.timeout(60000);

  it('starts over without counting iteration 0 twice', async () => {
    const out = mkdtempSync(join(tmpdir(), 'coevolve-resume0-'));
    const path = join(out, 'c.yaml');
    writeFileSync(path, stringify(tinyConfig(out, { iterations: 30, checkpointEvery: 1000 })));
    const dir = join(out, 'tiny');
    const killed = await run([path], (d) => iterations(d).some((i) => i >= 2), dir);
    expect(killed).to.equal(null);
    await run(['--resume', dir]);
    expect(iterations(dir)).to.deep.equal(Array.from({ length: 31 }, (_, i) => i));
  });
});
