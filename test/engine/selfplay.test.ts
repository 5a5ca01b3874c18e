import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { jsonRows } from '../jsonl.js';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { loadModel } from '../../src/models/store.js';

const BASE = process.env.COEVOLVE_SELFPLAY_BASE ?? 'checkpoints/base-selfplay-add2';
const bin = new URL('../../bin/coevolve.js', import.meta.url).pathname;

/** A small propose-solve run from the shipped self-play base. */
function selfplay(out: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    name: 'sp',
    seed: 2,
    backend: 'wasm',
    iterations: 4,
    outDir: out,
    models: { main: { checkpoint: BASE } },
    roles: { proposer: { kind: 'proposer', model: 'main' }, solver: { kind: 'solver', model: 'main' } },
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 2, operands: 2, operators: '+' },
      train: { source: 'none' },
      perIteration: 1,
    },
    arena: {
      kind: 'propose-solve',
      groupSize: 6,
      maxNewTokens: 7,
      temperature: 1,
      options: { attempts: 4, limits: { digits: 2, operands: 2, operators: '+' } },
    },
    judges: [
      { kind: 'verifier', options: { role: 'solver' } },
      { kind: 'learnability', options: { role: 'proposer' } },
    ],
    trainer: { lr: 1e-3 },
    evaluators: [{ kind: 'proposals', name: 'proposer', options: { samples: 8 } }],
    eval: { every: 2 },
    checkpointEvery: 2,
    ...over,
  };
}

async function run(config: ExperimentInput): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'coevolve-sp-'));
  const path = join(root, 'c.yaml');
  writeFileSync(path, stringify({ ...config, outDir: root }));
  await runCommand(path, { set: [] });
  return join(root, config.name);
}

const metrics = (dir: string) => jsonRows<{ iteration: number; [k: string]: unknown }>(join(dir, 'metrics.jsonl'));
const weights = async (dir: string) => {
  const m = await loadModel(dir);
  const w = Object.fromEntries(Object.entries(m.model.weights).map(([k, t]) => [k, Array.from(t.dataSync())]));
  m.model.dispose();
  return w;
};

describe('self-play (propose-solve) runs', function () {
  this.timeout(240000);
  before(function () {
    if (!existsSync(BASE)) this.skip();
  });

  it('shared model: invalid proposals get their penalty, proposal metrics are logged, and nothing crashes', async () => {
    const dir = await run(selfplay(''));
    const rows = metrics(dir);
    expect(rows.map((r) => r.iteration)).to.deep.equal([0, 1, 2, 3, 4]);
    for (const r of rows.slice(1)) {
      expect(r['proposals/valid_rate']).to.be.within(0, 1);
      expect(r).to.have.property('reward/proposer');
    }
    expect(rows[0]).to.have.property('eval/proposer/valid');
    const episodes = readdirSync(join(dir, 'episodes')).flatMap((f) =>
      readFileSync(join(dir, 'episodes', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    const invalid = episodes.filter((e) => e.turns[0].role === 'proposer' && !e.turns[0].action.valid);
    for (const e of invalid) expect(e.turns).to.have.length(1); // an invalid proposal is never attempted
    const valid = episodes.filter((e) => e.turns[0].action.valid);
    expect(valid.length).to.be.greaterThan(0);
    for (const e of valid) {
      expect(
        e.turns
          .slice(1)
          .every(
            (t: { role: string; compare: string; task: { answer: string } }) =>
              t.role === 'solver' && t.compare === 'episode' && typeof t.task.answer === 'string',
          ),
      ).to.equal(true);
    }
  });

  it('separate models with phases: the model whose role does not train keeps bit-identical weights', async () => {
    const both = { proposer: { checkpoint: BASE }, solver: { checkpoint: BASE } };
    const roles = { proposer: { kind: 'proposer', model: 'proposer' }, solver: { kind: 'solver', model: 'solver' } };
    const dir = await run(
      selfplay('', {
        models: both,
        roles,
        phases: [
          { roles: ['solver'], iterations: 2 },
          { roles: ['proposer'], iterations: 2 },
        ],
      }),
    );
    const start = { proposer: await weights(BASE), solver: await weights(BASE) };
    const at2 = {
      proposer: await weights(join(dir, 'checkpoints/iter-000002/proposer')),
      solver: await weights(join(dir, 'checkpoints/iter-000002/solver')),
    };
    const at4 = {
      proposer: await weights(join(dir, 'checkpoints/iter-000004/proposer')),
      solver: await weights(join(dir, 'checkpoints/iter-000004/solver')),
    };
    expect(at2.proposer).to.deep.equal(start.proposer); // phase 1: only the solver trains
    expect(at2.solver).to.not.deep.equal(start.solver);
    expect(at4.solver).to.deep.equal(at2.solver); // phase 2: only the proposer trains
    expect(at4.proposer).to.not.deep.equal(at2.proposer);
    expect(
      metrics(dir)
        .slice(1)
        .map((r) => r.phase),
    ).to.deep.equal([0, 0, 1, 1]);
  });

  it('resumes after SIGKILL mid-run without repeating an iteration, the task buffer kept', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-sp-kill-'));
    const path = join(root, 'c.yaml');
    writeFileSync(
      path,
      stringify(selfplay(root, { iterations: 8, checkpointEvery: 3, buffer: { size: 64, replay: 2 } })),
    );
    const dir = join(root, 'sp');
    const child = spawn(process.execPath, [bin, 'run', path], { stdio: 'ignore' });
    await new Promise<void>((ok) => {
      const t = setInterval(() => {
        const its = metrics(dir).map((r) => r.iteration);
        if (its.some((i) => i >= 4)) {
          clearInterval(t);
          child.kill('SIGKILL');
          ok();
        }
      }, 50);
    });
    await new Promise((r) => child.on('exit', r));
    await runCommand(undefined, { set: [], resume: dir });
    expect(metrics(dir).map((r) => r.iteration)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const state = JSON.parse(readFileSync(join(dir, 'checkpoints/iter-000008/loop.json'), 'utf8'));
    expect(state.buffer.length).to.be.greaterThan(0);
  });
});
