import { expect } from 'chai';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineJudge } from '../../src/api/define.js';
import { runExperiment } from '../../src/engine/experiment.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { reportCommand } from '../../src/report/text.js';
import { RunStore } from '../../src/store/run.js';
import { TEST_BACKEND } from '../needs.js';

// a forced collapse: the reward pays closeness to one constant answer, whatever the sum
const constant = defineJudge('near-100', {
  reward: (turn) => {
    const v = Number(turn.action.value);
    return turn.action.valid && Number.isFinite(v) ? Math.max(0, 1 - Math.abs(v - 100) / 100) : 0;
  },
});

/** The shipped add2 base (36% held out), paid by `near-100`, evaluated every 2 iterations. */
function config(outDir: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    name: 'forced',
    seed: 4,
    backend: TEST_BACKEND,
    workers: 1,
    iterations: 40,
    outDir,
    models: { main: { checkpoint: 'checkpoints/base-add2' } },
    roles: { solver: { kind: 'solver', model: 'main' } },
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 2, operands: 2, operators: '+' },
      train: { source: 'file', path: 'configs/data/add2-unseen.jsonl' },
      eval: { source: 'file', path: 'checkpoints/base-add2/heldout.jsonl' },
      perIteration: 8,
    },
    arena: { kind: 'solve', groupSize: 8, maxNewTokens: 5, temperature: 1 },
    judges: [{ kind: 'near-100' }],
    trainer: { lr: 0.002, advantage: 'grpo' },
    eval: { every: 2, samples: 1 },
    checkpointEvery: 2,
    collapse: { heldOut: { window: 2 } },
    ...over,
  };
}

describe('stopOn: collapse, live', function () {
  this.timeout(300000);

  it('a run paid for one constant answer is flagged, stops early, and names its best checkpoint', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-collapse-'));
    const lines: string[] = [];
    const { dir, metrics } = await runExperiment(config(root, { stopOn: 'collapse' }), {
      definitions: [constant],
      log: (l) => lines.push(l),
    });
    const store = await RunStore.open(dir);
    const rec = store.record;
    expect(rec.status).to.equal('done');
    expect(rec.stopped, 'run.json records the stop').to.not.equal(undefined);
    const at = rec.stopped!.iteration;
    expect(at).to.be.below(40);
    expect(rec.stopped!.on).to.equal('collapse');
    // the run ended at the flag: its last row is the stop, flagged, and checkpointed
    const last = metrics[metrics.length - 1];
    expect(last.iteration).to.equal(at);
    expect(last['collapse/flagged']).to.be.at.least(1);
    expect(metrics.slice(0, -1).every((r) => !r['collapse/flagged'])).to.equal(true);
    expect(rec.lastCheckpoint!.iteration).to.equal(at);
    expect(existsSync(join(dir, rec.lastCheckpoint!.dir))).to.equal(true);
    // held out, the answers went to one number: pass@1 fell from the start
    const pass = metrics.filter((r) => typeof r['eval/pass1'] === 'number');
    expect(pass[pass.length - 1]['eval/pass1'] as number).to.be.below(pass[0]['eval/pass1'] as number);
    // the best is the highest eval/pass1 among the starting weights and the checkpoints
    const saved = new Set([0, ...rec.checkpoints.map((c) => c.iteration)]);
    const top = Math.max(...pass.filter((r) => saved.has(r.iteration)).map((r) => r['eval/pass1'] as number));
    expect(rec.best!.metric).to.equal('eval/pass1');
    expect(rec.best!.value).to.equal(top);
    if (rec.best!.iteration === 0) expect(rec.best!.dir).to.equal(undefined);
    else expect(existsSync(join(dir, rec.best!.dir!))).to.equal(true);
    // the log says which detector, and where the run stopped
    expect(lines.some((l) => /^collapse: \w+ at iteration \d+: /.test(l))).to.equal(true);
    expect(lines.some((l) => l.startsWith(`stopOn collapse: the run ends at iteration ${at}`))).to.equal(true);
    // the report says it too
    const report = await reportCommand(dir);
    expect(report).to.include(`stopped early at iteration ${at} (stopOn: collapse)`);
    expect(report).to.match(/: FLAGGED at iteration \d+/);
    expect(report).to.include(`best checkpoint by eval/pass1: `);
  });

  it('without stopOn the same run is flagged and goes on to its last iteration', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-collapse-'));
    const { dir, metrics } = await runExperiment(config(root, { iterations: 6 }), {
      definitions: [constant],
      log: () => {},
    });
    const rec = (await RunStore.open(dir)).record;
    expect(rec.status).to.equal('done');
    expect(rec.stopped).to.equal(undefined);
    expect(metrics[metrics.length - 1].iteration).to.equal(6);
    expect(metrics.some((r) => (r['collapse/flagged'] as number) >= 1)).to.equal(true);
  });
});
