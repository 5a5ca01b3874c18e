import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

/** Two iterations of the judge arena on the shipped base: a frozen solver, a judge trained by the verdict judge. */
function judgeRun(out: string, evaluators: ExperimentInput['evaluators']): ExperimentInput {
  return {
    name: 'jr',
    seed: 2,
    backend: TEST_BACKEND,
    iterations: 2,
    outDir: out,
    workers: 1,
    models: { solver: { checkpoint: 'checkpoints/base-add2' }, judge: { checkpoint: 'checkpoints/base-add2' } },
    roles: { solver: { kind: 'solver', model: 'solver' }, judge: { kind: 'judge', model: 'judge' } },
    phases: [{ roles: ['judge'], iterations: 1 }],
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 2, operands: 2, operators: '+' },
      train: { source: 'file', path: 'configs/data/add2-unseen.jsonl' },
      perIteration: 8,
    },
    arena: { kind: 'judge', groupSize: 1, maxNewTokens: 5, temperature: 1, options: { candidates: 4, verdicts: 2 } },
    judges: [{ kind: 'verifier' }, { kind: 'verdict' }],
    trainer: { lr: 1e-4 },
    evaluators,
    eval: { every: 2 },
    checkpointEvery: 2,
  };
}

describe('a judge run', function () {
  this.timeout(240000);

  it('trains only the judge, logs its rollout metrics and its held-out verdicts', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-judge-'));
    const path = join(root, 'c.yaml');
    const data = 'checkpoints/base-add2/heldout.jsonl';
    writeFileSync(
      path,
      stringify(
        judgeRun(root, [
          { kind: 'verdicts', name: 'heldout', options: { data } },
          { kind: 'verdicts', name: 'cold', options: { data, answerTemperature: 0.01, repeats: 2 } },
          { kind: 'verdicts', name: 'fixed', options: { data, answers: 'fixed', temperature: 0 } },
        ]),
      ),
    );
    await runCommand(path, { set: [] });
    const rows = readFileSync(join(root, 'jr', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    // the solver's answers are mixed on some tasks, and only those give the judge a pair
    expect(last['judge/judged_share']).to.be.within(0, 1);
    expect(last['turns/judge']).to.equal(Math.round(last['judge/judged_share'] * 8) * 2 * 2);
    expect(last['losses/solver/loss']).to.equal(undefined); // frozen: the phase trains the judge alone
    for (const k of ['accuracy', 'valid_rate', 'judged_share']) expect(last[`eval/heldout/${k}`], k).to.be.within(0, 1);
    expect(rows.find((r) => r.iteration === 0)['eval/heldout/judged_share']).to.be.above(0);
    // answers sampled near greedy are nearly all alike, so few tasks are mixed; each task played twice
    const cold = last['eval/cold/judged_share'];
    expect(cold).to.be.below(last['eval/heldout/judged_share'] / 2);
    expect(cold * 512).to.be.closeTo(Math.round(cold * 512), 1e-9);
    // the fixed set: every held-out task judged on its answer and a slip of it, whatever the solver writes
    for (const r of rows.filter((r) => r['eval/fixed/accuracy'] !== undefined)) {
      expect(r['eval/fixed/judged_share']).to.equal(1);
      expect(r['eval/fixed/accuracy'] * 512).to.be.closeTo(Math.round(r['eval/fixed/accuracy'] * 512), 1e-9);
    }
    expect(rows.filter((r) => r['eval/fixed/accuracy'] !== undefined)).to.have.length(2);
  });

  it('refuses a verdicts evaluator on another arena, or without its data, before any work', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-judge-'));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(judgeRun(root, [{ kind: 'verdicts', name: 'heldout', options: {} }])));
    const err = await runCommand(path, { set: [] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/evaluators\.0\.options\.data: required/);
    writeFileSync(
      path,
      stringify(
        judgeRun(root, [
          { kind: 'verdicts', name: 'heldout', options: { data: 'checkpoints/base-add2/heldout.jsonl', repeats: 0 } },
        ]),
      ),
    );
    const repeats = await runCommand(path, { set: [] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(repeats?.message).to.match(/evaluators\.0\.options\.repeats: expected a number > 0/);
    const solve = {
      ...judgeRun(root, [{ kind: 'verdicts', name: 'h', options: { data: 'checkpoints/base-add2/heldout.jsonl' } }]),
      models: { solver: { checkpoint: 'checkpoints/base-add2' } },
      roles: { solver: { kind: 'solver', model: 'solver' } },
      phases: undefined,
      arena: { kind: 'solve', groupSize: 2, maxNewTokens: 5 },
      judges: [{ kind: 'verifier' }],
    };
    writeFileSync(path, stringify(solve));
    const other = await runCommand(path, { set: [] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(other?.message).to.match(
      /verdicts measures the judge of a judge or five-roles arena; arena 'solve' is neither/,
    );
  });
});
