import { expect } from 'chai';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import type { ExperimentConfig } from '../../src/config/schema.js';
import type { Episode } from '../../src/core/types.js';
import { RunStore, shardName, type RunRecord } from '../../src/store/run.js';

const CONFIG: ExperimentConfig = parseConfig({
  name: 'store-test',
  iterations: 10,
  models: { main: { config: { dModel: 16, nHeads: 2 } } },
  roles: { solver: { kind: 'solver', model: 'main' } },
  tasks: { family: 'arith', train: { source: 'generate', count: 10 }, eval: { source: 'generate', count: 5 } },
  judges: [{ kind: 'exact' }],
  trainer: { lr: 3e-4 },
});

function episode(id: string): Episode {
  return {
    id,
    group: `g-${id}`,
    task: { id: `t-${id}`, family: 'arith', prompt: '1+1=', answer: '2' },
    turns: [
      {
        index: 0,
        role: 'solver',
        model: 'main',
        prompt: [1, 2],
        completion: [3],
        logProbs: [-0.5],
        entropy: [1],
        selfCertainty: [0.1],
        text: '2',
        action: { valid: true, value: '2' },
      },
    ],
  };
}

const episodes = (iteration: number, n: number) => Array.from({ length: n }, (_, i) => episode(`${iteration}-${i}`));

describe('store/RunStore', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'coevolve-store-'));
    dir = join(root, 'run');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('records the backend line and reports the earlier one when a later process differs', async () => {
    const store = await RunStore.create(dir, CONFIG);
    expect(await store.recordCompute("backend: wasm (tfjs 'wasm')")).to.equal(undefined);
    expect(await store.recordCompute("backend: wasm (tfjs 'wasm')")).to.equal(undefined);
    expect(await store.recordCompute("backend: wasm + native sgemm (OpenBLAS) (tfjs 'wasm')")).to.equal(
      "backend: wasm (tfjs 'wasm')",
    );
    expect((JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunRecord).compute).to.contain('OpenBLAS');
    await store.close();
  });

  describe('create and open', () => {
    it('lays out the run directory and writes config.yaml and run.json to disk', async () => {
      const store = await RunStore.create(dir, CONFIG);
      expect(store.dir).to.equal(resolve(dir));
      expect(existsSync(join(dir, 'config.yaml'))).to.equal(true);
      expect(existsSync(join(dir, 'episodes'))).to.equal(true);
      expect(existsSync(join(dir, 'checkpoints'))).to.equal(true);
      const rec = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunRecord;
      expect(rec).to.include({ status: 'running', iterations: 0, lastCheckpoint: null });
      expect(rec.checkpoints).to.deep.equal([]);
      expect(rec.resumedAt).to.deep.equal([]);
      expect(Date.parse(rec.createdAt)).to.be.a('number').and.not.NaN;
    });

    it('open reads the config back, validated', async () => {
      await RunStore.create(dir, CONFIG);
      const store = await RunStore.open(dir);
      expect(store.config).to.deep.equal(CONFIG);
      expect(store.config.trainer.lr).to.equal(3e-4);
    });

    it('refuses to create over an existing run but accepts an empty folder', async () => {
      mkdirSync(dir);
      await RunStore.create(dir, CONFIG);
      let err: Error | undefined;
      await RunStore.create(dir, CONFIG).catch((e: Error) => (err = e));
      expect(err?.message).to.match(/already holds a run/);
    });

    it('refuses a folder that holds files but no run.json, and leaves them be', async () => {
      mkdirSync(join(dir, 'episodes'), { recursive: true });
      writeFileSync(join(dir, 'metrics.jsonl'), '{"iteration":0,"eval/pass1":0.5}\n');
      let err: Error | undefined;
      await RunStore.create(dir, CONFIG).catch((e: Error) => (err = e));
      expect(err?.message).to.match(/is not empty and holds no run\.json \(.*metrics\.jsonl/);
      expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8')).to.equal('{"iteration":0,"eval/pass1":0.5}\n');
      expect(existsSync(join(dir, 'run.json'))).to.equal(false);
      expect(existsSync(join(dir, 'run.lock'))).to.equal(false);
    });

    it('holds the lock while open to write; a reader needs none and cannot write', async () => {
      const a = await RunStore.create(dir, CONFIG);
      let err: Error | undefined;
      await RunStore.open(dir, { write: true }).catch((e: Error) => (err = e));
      expect(err?.message).to.match(new RegExp(`in use: pid ${process.pid}`));
      const reader = await RunStore.open(dir);
      expect(() => reader.appendMetrics({ iteration: 1 })).to.throw(/opened to read/);
      a.close();
      expect(() => a.appendMetrics({ iteration: 1 })).to.throw(/closed/);
      (await RunStore.open(dir, { write: true })).close();
    });

    it('open fails clearly on a missing folder, a folder without run.json and a corrupt run.json', async () => {
      const fail = async (d: string) => {
        try {
          await RunStore.open(d);
        } catch (e) {
          return (e as Error).message;
        }
        return 'no error';
      };
      expect(await fail(join(root, 'nope'))).to.match(/not a run directory: it does not exist/);
      mkdirSync(join(root, 'empty'));
      expect(await fail(join(root, 'empty'))).to.match(/not a run directory: it has no run\.json/);
      await RunStore.create(dir, CONFIG);
      writeFileSync(join(dir, 'run.json'), '{"status": "runn');
      expect(await fail(dir)).to.match(/cannot read .*run\.json/);
      writeFileSync(join(dir, 'run.json'), '{"hello": 1}');
      expect(await fail(dir)).to.match(/is not a run record/);
    });

    it('run.json survives reopen: status and checkpoints are read back from disk', async () => {
      const a = await RunStore.create(dir, CONFIG);
      const ckpt = a.checkpointDir(5);
      expect(ckpt).to.equal(join(resolve(dir), 'checkpoints', 'iter-000005'));
      await a.recordCheckpoint(5, ckpt);
      await a.recordCheckpoint(10, a.checkpointDir(10));
      await a.setStatus('failed', 'out of memory');

      const onDisk = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunRecord;
      expect(onDisk.status).to.equal('failed');
      expect(onDisk.error).to.equal('out of memory');
      expect(onDisk.iterations).to.equal(10);
      expect(onDisk.checkpoints).to.deep.equal([
        { iteration: 5, dir: 'checkpoints/iter-000005' },
        { iteration: 10, dir: 'checkpoints/iter-000010' },
      ]);
      expect(onDisk.lastCheckpoint).to.deep.equal({ iteration: 10, dir: 'checkpoints/iter-000010' });

      a.close();
      const b = await RunStore.open(dir, { write: true });
      expect(b.record).to.deep.equal(onDisk);
      expect(b.lastCheckpointDir()).to.equal(a.checkpointDir(10));
      await b.setStatus('done');
      const again = await RunStore.open(dir);
      expect(again.record.status).to.equal('done');
      expect(again.record).to.not.have.property('error');
    });

    it('run.json written by another process is read back', async function () {
      this.timeout(30000);
      const script = join(root, 'writer.mts');
      const storeUrl = pathToFileURL(resolve('src/store/run.ts')).href;
      const loadUrl = pathToFileURL(resolve('src/config/load.ts')).href;
      writeFileSync(
        script,
        `import { RunStore } from ${JSON.stringify(storeUrl)};
import { parseConfig } from ${JSON.stringify(loadUrl)};
const config = parseConfig(JSON.parse(process.argv[3]));
const s = await RunStore.create(process.argv[2], config);
s.appendMetrics({ iteration: 1, reward: 0.25 });
await s.recordCheckpoint(1, s.checkpointDir(1));
await s.setStatus('done');
`,
      );
      await run(process.execPath, ['--import', 'tsx', script, dir, JSON.stringify(CONFIG)]);
      const s = await RunStore.open(dir);
      expect(s.record.status).to.equal('done');
      expect(s.record.iterations).to.equal(1);
      expect(s.readMetrics()).to.deep.equal([{ iteration: 1, reward: 0.25 }]);
    });
  });

  describe('metrics', () => {
    it('appends rows as JSON lines and reads them back in order', async () => {
      const s = await RunStore.create(dir, CONFIG);
      expect(s.readMetrics()).to.deep.equal([]);
      s.appendMetrics({ iteration: 1, reward: 0.5, loss: 1.25 });
      s.appendMetrics({ iteration: 2, reward: 0.75, note: 'x' });
      const text = readFileSync(join(dir, 'metrics.jsonl'), 'utf8');
      expect(text.split('\n')).to.have.length(3); // two lines and the final newline
      expect(s.readMetrics()).to.deep.equal([
        { iteration: 1, reward: 0.5, loss: 1.25 },
        { iteration: 2, reward: 0.75, note: 'x' },
      ]);
      expect((await RunStore.open(dir)).readMetrics()).to.have.length(2);
    });

    it('requires an iteration on every row', async () => {
      const s = await RunStore.create(dir, CONFIG);
      expect(() => s.appendMetrics({ reward: 1 } as never)).to.throw(/numeric iteration/);
    });

    it('skips a torn last line when reading and cuts it before the next append', async () => {
      const s = await RunStore.create(dir, CONFIG);
      s.appendMetrics({ iteration: 1, reward: 1 });
      appendFileSync(join(dir, 'metrics.jsonl'), '{"iteration": 2, "rew');
      expect(s.readMetrics()).to.deep.equal([{ iteration: 1, reward: 1 }]);
      s.close();
      const t = await RunStore.open(dir, { write: true });
      t.appendMetrics({ iteration: 2, reward: 2 });
      expect(t.readMetrics()).to.deep.equal([
        { iteration: 1, reward: 1 },
        { iteration: 2, reward: 2 },
      ]);
    });
  });

  describe('episodes', () => {
    it('stores each episode as one line carrying its iteration', async () => {
      const s = await RunStore.create(dir, CONFIG);
      s.appendEpisodes(1, episodes(1, 3));
      s.appendEpisodes(2, []);
      const stored = s.readEpisodes();
      expect(stored).to.have.length(3);
      expect(stored[0]).to.deep.equal({ iteration: 1, ...episode('1-0') });
      expect(readdirSync(join(dir, 'episodes'))).to.deep.equal(['shard-000000.jsonl']);
    });

    it('rolls over to a new shard at the limit, also inside one batch', async () => {
      const s = await RunStore.create(dir, CONFIG, { shardSize: 4 });
      s.appendEpisodes(1, episodes(1, 3));
      s.appendEpisodes(2, episodes(2, 6)); // 1 fills shard 0, 4 fill shard 1, 1 starts shard 2
      const counts = s.shardFiles().map((f) => readFileSync(f, 'utf8').trim().split('\n').length);
      expect(s.shardFiles().map((f) => f.slice(-18))).to.deep.equal([shardName(0), shardName(1), shardName(2)]);
      expect(counts).to.deep.equal([4, 4, 1]);
      expect(s.readEpisodes().map((e) => e.id)).to.deep.equal([...episodes(1, 3), ...episodes(2, 6)].map((e) => e.id));
    });

    it('continues shard numbering and filling after reopen', async () => {
      const a = await RunStore.create(dir, CONFIG, { shardSize: 4 });
      a.appendEpisodes(1, episodes(1, 6)); // shard 0: 4, shard 1: 2
      a.close();
      const b = await RunStore.open(dir, { shardSize: 4, write: true });
      b.appendEpisodes(2, episodes(2, 3)); // shard 1: +2 -> 4, shard 2: 1
      const counts = b.shardFiles().map((f) => readFileSync(f, 'utf8').trim().split('\n').length);
      expect(counts).to.deep.equal([4, 4, 1]);
      b.close();
      const c = await RunStore.open(dir, { shardSize: 4, write: true });
      c.appendEpisodes(3, episodes(3, 4));
      expect(c.shardFiles().map((f) => readFileSync(f, 'utf8').trim().split('\n').length)).to.deep.equal([4, 4, 4, 1]);
      expect(c.readEpisodes()).to.have.length(13);
    });

    it('uses 5000 episodes per shard by default', async () => {
      const s = await RunStore.create(dir, CONFIG);
      expect(s.shardSize).to.equal(5000);
    });
  });

  describe('truncateAfter and resume', () => {
    it('looks past an empty newest shard (a writer killed between making the file and writing to it)', async () => {
      const s = await RunStore.create(dir, CONFIG, { shardSize: 4 });
      for (let it = 1; it <= 4; it++) s.appendEpisodes(it, episodes(it, 4)); // four full shards
      const files = s.shardFiles();
      writeFileSync(join(dirname(files[files.length - 1]), shardName(files.length)), ''); // the fifth, made and never written
      await s.truncateAfter(2);
      // a scan that stopped at the empty shard would keep iterations 3 and 4
      expect(s.readEpisodes().map((e) => e.iteration)).to.deep.equal([1, 1, 1, 1, 2, 2, 2, 2]);
    });

    it('removes later iterations from metrics and episodes, drops emptied shards and later checkpoints', async () => {
      const s = await RunStore.create(dir, CONFIG, { shardSize: 4 });
      for (let it = 1; it <= 5; it++) {
        s.appendMetrics({ iteration: it, reward: it / 10 });
        s.appendEpisodes(it, episodes(it, 3));
        if (it % 2 === 0) await s.recordCheckpoint(it, s.checkpointDir(it));
      }
      expect(s.shardFiles()).to.have.length(4); // 15 episodes
      await s.truncateAfter(2);
      expect(s.readMetrics().map((r) => r.iteration)).to.deep.equal([1, 2]);
      expect(s.readEpisodes().map((e) => e.iteration)).to.deep.equal([1, 1, 1, 2, 2, 2]);
      expect(s.shardFiles()).to.have.length(2); // 4 + 2
      expect(s.record.lastCheckpoint?.iteration).to.equal(2);
      expect(s.record.checkpoints.map((c) => c.iteration)).to.deep.equal([2]);
      expect(s.record.iterations).to.equal(2);

      // appending continues in the half-full shard
      s.appendEpisodes(3, episodes(3, 3));
      const counts = s.shardFiles().map((f) => readFileSync(f, 'utf8').trim().split('\n').length);
      expect(counts).to.deep.equal([4, 4, 1]);
      // and the truncation is on disk
      const reopened = await RunStore.open(dir, { shardSize: 4 });
      expect(reopened.record.iterations).to.equal(2);
      expect(reopened.readEpisodes()).to.have.length(9);
    });

    it('removes a torn last line from metrics and the last shard', async () => {
      const s = await RunStore.create(dir, CONFIG);
      s.appendMetrics({ iteration: 1, reward: 1 });
      s.appendEpisodes(1, episodes(1, 2));
      appendFileSync(join(dir, 'metrics.jsonl'), '{"iteration": 1, "tor');
      appendFileSync(join(dir, 'episodes', shardName(0)), '{"iteration": 1, "id": "x');
      await s.truncateAfter(1);
      expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8')).to.equal('{"iteration":1,"reward":1}\n');
      const shard = readFileSync(join(dir, 'episodes', shardName(0)), 'utf8');
      expect(shard.endsWith('}\n')).to.equal(true);
      expect(shard.trim().split('\n')).to.have.length(2);
    });

    it('stops at a corrupt line in the middle of metrics.jsonl, naming it, and changes nothing', async () => {
      const s = await RunStore.create(dir, CONFIG);
      for (let it = 1; it <= 4; it++) s.appendMetrics({ iteration: it });
      await s.recordCheckpoint(2, s.checkpointDir(2));
      const path = join(dir, 'metrics.jsonl');
      const lines = readFileSync(path, 'utf8').split('\n');
      lines[1] = '{"iteration": 2, oops';
      writeFileSync(path, lines.join('\n'));
      const before = readFileSync(path, 'utf8');
      let err: Error | undefined;
      await s.resume().catch((e: Error) => (err = e));
      expect(err?.message).to.match(/metrics\.jsonl:2: not a JSON object/);
      expect(readFileSync(path, 'utf8')).to.equal(before);
      expect(s.record.resumedAt).to.deep.equal([]);
    });

    it('is idempotent', async () => {
      const s = await RunStore.create(dir, CONFIG);
      s.appendMetrics({ iteration: 1 });
      s.appendMetrics({ iteration: 2 });
      await s.truncateAfter(1);
      await s.truncateAfter(1);
      expect(s.readMetrics()).to.deep.equal([{ iteration: 1 }]);
    });

    it('resume() rolls back to the last checkpoint and notes it', async () => {
      const a = await RunStore.create(dir, CONFIG);
      for (let it = 1; it <= 7; it++) {
        a.appendMetrics({ iteration: it });
        a.appendEpisodes(it, episodes(it, 1));
        if (it % 5 === 0) await a.recordCheckpoint(it, a.checkpointDir(it));
      }
      await a.setStatus('failed', 'killed');
      a.close();
      const b = await RunStore.open(dir, { write: true });
      expect(await b.resume()).to.equal(5);
      expect(b.readMetrics().map((r) => r.iteration)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(b.readEpisodes()).to.have.length(5);
      const c = await RunStore.open(dir);
      expect(c.record.status).to.equal('running');
      expect(c.record.resumedAt).to.deep.equal([5]);
      expect(c.record).to.not.have.property('error');
    });

    it('survives a writer killed with SIGKILL mid-run', async function () {
      this.timeout(30000);
      const script = join(root, 'killed.mts');
      const storeUrl = pathToFileURL(resolve('src/store/run.ts')).href;
      const loadUrl = pathToFileURL(resolve('src/config/load.ts')).href;
      writeFileSync(
        script,
        `import { RunStore } from ${JSON.stringify(storeUrl)};
import { parseConfig } from ${JSON.stringify(loadUrl)};
const s = await RunStore.create(process.argv[2], parseConfig(JSON.parse(process.argv[3])), { shardSize: 50 });
const big = 'x'.repeat(20000);
for (let it = 1; ; it++) {
  s.appendMetrics({ iteration: it, pad: big });
  s.appendEpisodes(it, Array.from({ length: 7 }, (_, i) => ({ id: it + '-' + i, group: 'g', task: { id: 't', family: 'f', prompt: big }, turns: [] })));
  if (it % 3 === 0) await s.recordCheckpoint(it, s.checkpointDir(it));
  if (it === 4) process.stdout.write('ready\\n');
}
`,
      );
      const child = spawn(process.execPath, ['--import', 'tsx', script, dir, JSON.stringify(CONFIG)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((ok) => child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && ok()));
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));

      const taken: string[] = [];
      const s = await RunStore.open(dir, { shardSize: 50, write: true, log: (l) => taken.push(l) });
      expect(taken.join('\n'), 'the killed writer left its lock, which is stale').to.match(
        /took over the stale lock of pid \d+/,
      );
      const from = await s.resume();
      expect(from).to.be.at.least(3);
      expect(from % 3).to.equal(0);
      const its = s.readMetrics().map((r) => r.iteration);
      expect(its).to.deep.equal(Array.from({ length: from }, (_, i) => i + 1));
      const eps = s.readEpisodes();
      expect(eps).to.have.length(7 * from);
      expect(Math.max(...eps.map((e) => e.iteration))).to.equal(from);
      // appending after the resume continues cleanly
      s.appendMetrics({ iteration: from + 1 });
      expect(s.readMetrics()).to.have.length(from + 1);
    });
  });
});

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((ok, fail) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    p.on('error', fail);
    p.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${cmd} exited with ${code}`))));
  });
}
