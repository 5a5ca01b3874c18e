import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

/** The shipped SPC config cut to two small iterations on one thread. */
function criticRun(
  out: string,
  change: (c: ExperimentInput) => void = () => {},
  config = 'configs/runs/critics/spc-sum3.yaml',
): string {
  const c = parse(readFileSync(config, 'utf8')) as ExperimentInput;
  Object.assign(c, {
    iterations: 2,
    outDir: out,
    workers: 1,
    backend: TEST_BACKEND,
    eval: { every: 2 },
    checkpointEvery: 2,
  });
  c.tasks.perIteration = 4;
  change(c);
  const path = join(out, 'c.yaml');
  writeFileSync(path, stringify(c));
  return path;
}

describe('an adversarial-critic run', function () {
  this.timeout(240000);

  it('trains the sneaky role and the critic jointly, with one-token verdicts, and measures the critic on three held-out sets', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-critic-'));
    await runCommand(criticRun(root), { set: [] });
    const rows = readFileSync(join(root, 'spc-sum3', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    expect(last['turns/sneaky']).to.equal(16);
    expect(last['losses/sneaky/loss']).to.be.a('number');
    for (const k of ['sneaky/valid_rate']) expect(last[k], k).to.be.within(0, 1);
    for (const set of ['slips', 'random', 'solver']) {
      for (const k of ['accuracy', 'planted_accuracy', 'right_accuracy', 'valid_rate'])
        expect(last[`eval/${set}/${k}`], `${set}/${k}`).to.be.within(0, 1);
    }
    // every critic turn stops within its own 4 new tokens, not the arena's 24
    const shard = readFileSync(
      join(root, 'spc-sum3', 'episodes', readdirSync(join(root, 'spc-sum3', 'episodes')).sort()[0]),
      'utf8',
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const critic = shard.flatMap((e: { turns: { role: string; completion: number[] }[] }) =>
      e.turns.filter((t) => t.role === 'critic'),
    );
    if (critic.length)
      expect(Math.max(...critic.map((t: { completion: number[] }) => t.completion.length))).to.be.at.most(4);
  });

  it('a critic that checks first: its checks train beside its verdicts, and held-out sets ask it the same way', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-critic-'));
    await runCommand(
      criticRun(root, () => {}, 'configs/runs/critics/spc-sum3-check-random.yaml'),
      { set: [] },
    );
    const rows = readFileSync(join(root, 'spc-sum3-check-random', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    // 4 tasks x 4 episodes x 2 showings x 2 verdicts, each after its own check
    expect(last['turns/critic']).to.equal(128);
    for (const set of ['slips', 'random', 'solver'])
      expect(last[`eval/${set}/check_accuracy`], set).to.be.within(0.5, 1); // the base solves on as the solver it was made from
    const dir = join(root, 'spc-sum3-check-random', 'episodes');
    const turns = readdirSync(dir)
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n'))
      .flatMap((l) => (JSON.parse(l) as { turns: { compare: string; completion: number[] }[] }).turns);
    // a verdict is one digit and the end of sequence, a check a solver's working
    expect(Math.max(...turns.filter((t) => t.compare === 'episode').map((t) => t.completion.length))).to.be.at.most(2);
    expect(Math.max(...turns.filter((t) => t.compare === 'episode:check').map((t) => t.completion.length))).to.be.above(
      2,
    );
  });

  it('a frozen checker writes the checks, in training and held out, and only the critic learns', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-critic-'));
    // one held-out set (a solver's own errors), to keep it short
    await runCommand(
      criticRun(
        root,
        (c) => {
          c.evaluators = c.evaluators!.filter((e) => e.name === 'solver');
        },
        'configs/runs/critics/spc-sum3-steps-random-checker.yaml',
      ),
      { set: [] },
    );
    const rows = readFileSync(join(root, 'spc-sum3-steps-random-checker', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = rows.find((r) => r.iteration === 2);
    // 4 tasks x 4 episodes x 2 showings x 2 verdicts: one check each by the checker, two step answers by the critic
    expect(last['turns/checker']).to.equal(64);
    expect(last['turns/critic']).to.equal(128);
    expect(last['losses/critic/loss']).to.be.a('number');
    expect(Object.keys(last).some((k) => k.startsWith('losses/checker'))).to.equal(false);
    expect(last['eval/solver/check_accuracy']).to.be.within(0.5, 1);
  });

  it('refuses a given-working evaluator whose file has no working, before any work', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-critic-'));
    const path = criticRun(root, (c) => {
      c.evaluators = [
        {
          kind: 'critic',
          name: 'x',
          options: { data: 'checkpoints/base-sum3-working/heldout.jsonl', corrupter: 'given' },
        },
      ];
    });
    const err = await runCommand(path, { set: [] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(
      /evaluators\.0\.options\.data: .*heldout\.jsonl:1: corrupter 'given' needs a 'working' string/,
    );
  });
});
