import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import { tinyConfig } from './fixtures.js';

const bin = new URL('../../bin/coevolve.js', import.meta.url).pathname;

interface Exit {
  code: number | null;
  stderr: string;
  pid: number;
}

function start(args: string[]): { child: ChildProcess; done: Promise<Exit> } {
  const child = spawn(process.execPath, [bin, 'run', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<Exit>((ok) => child.on('exit', (code) => ok({ code, stderr, pid: child.pid! })));
  return { child, done };
}

const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
    : [];
const metricIterations = (dir: string) =>
  lines(join(dir, 'metrics.jsonl')).flatMap((l) => {
    try {
      return [JSON.parse(l).iteration as number];
    } catch {
      return [];
    }
  });
const episodeIterations = (dir: string) =>
  readdirSync(join(dir, 'episodes')).flatMap((f) =>
    lines(join(dir, 'episodes', f)).map((l) => JSON.parse(l).iteration as number),
  );
const until = async (what: () => boolean) => {
  while (!what()) await new Promise((r) => setTimeout(r, 20));
};

describe('one writer per run', function () {
  this.timeout(180000);

  it('refuses a resume while the run goes on, and two resumes of a killed run: nothing is written twice', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-writers-'));
    const path = join(root, 'c.yaml');
    // long enough to be still going when the second writer comes; cut short below
    writeFileSync(path, stringify(tinyConfig(root, { iterations: 5000, checkpointEvery: 3 })));
    const dir = join(root, 'tiny');
    const first = start([path]);
    await until(() => metricIterations(dir).some((i) => i >= 4));
    const second = await start(['--resume', dir]).done;
    expect(second.code).to.equal(1);
    expect(second.stderr).to.match(new RegExp(`in use: pid ${first.child.pid} on \\S+ writes it since`));
    first.child.kill('SIGKILL');
    await first.done;
    const total = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).iterations + 9;
    const stored = join(dir, 'config.yaml');
    writeFileSync(stored, readFileSync(stored, 'utf8').replace('iterations: 5000', `iterations: ${total}`));

    // the killed writer's lock is stale: one of two simultaneous resumes takes it over, the other is refused
    const [a, b] = await Promise.all([start(['--resume', dir]).done, start(['--resume', dir]).done]);
    const [won, lost] = a.code === 0 ? [a, b] : [b, a];
    expect(won.code, won.stderr).to.equal(0);
    expect(won.stderr).to.match(/took over the stale lock of pid \d+/);
    expect(lost.code).to.equal(1);
    expect(lost.stderr).to.match(new RegExp(`in use: pid ${won.pid} `));
    expect(metricIterations(dir)).to.deep.equal(Array.from({ length: total + 1 }, (_, i) => i));
    const eps = episodeIterations(dir);
    expect(eps.length).to.equal(total * 16);
    expect(new Set(eps).size).to.equal(total);
    expect(existsSync(join(dir, 'run.lock')), 'the finished writer released its lock').to.equal(false);
  });
});

describe('resume checks the checkpoint whole before it changes anything', function () {
  this.timeout(120000);

  /** A finished tiny run whose record is rolled back to its checkpoint at 2, as if killed at iteration 4. */
  async function killedRun(): Promise<{ dir: string; ckpt: string }> {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-whole-run-'));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(tinyConfig(root, { iterations: 4, checkpointEvery: 2 })));
    await runCommand(path, { set: [] });
    const dir = join(root, 'tiny');
    const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    record.checkpoints = record.checkpoints.filter((c: { iteration: number }) => c.iteration === 2);
    Object.assign(record, { lastCheckpoint: record.checkpoints[0], iterations: 2, status: 'failed' });
    writeFileSync(join(dir, 'run.json'), JSON.stringify(record));
    return { dir, ckpt: join(dir, 'checkpoints', 'iter-000002', 'main') };
  }

  it('a truncated or missing optimizer state is refused, naming the file, with the metrics untouched', async () => {
    const { dir, ckpt } = await killedRun();
    const before = readFileSync(join(dir, 'metrics.jsonl'), 'utf8');
    truncateSync(join(ckpt, 'optimizer.bin'), 16);
    const cut = await runCommand(undefined, { set: [], resume: dir }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(cut).to.match(/iter-000002\/main\/optimizer\.bin has 16 bytes, model\.json says \d+/);
    unlinkSync(join(ckpt, 'optimizer.bin'));
    const gone = await runCommand(undefined, { set: [], resume: dir }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(gone).to.match(/iter-000002\/main\/optimizer\.bin is missing/);
    expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8')).to.equal(before);
    expect(metricIterations(dir)).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('--fresh-optimizer resumes past a missing optimizer state', async () => {
    const { dir, ckpt } = await killedRun();
    unlinkSync(join(ckpt, 'optimizer.json'));
    await runCommand(undefined, { set: [], resume: dir, freshOptimizer: true });
    expect(metricIterations(dir)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).status).to.equal('done');
  });
});
