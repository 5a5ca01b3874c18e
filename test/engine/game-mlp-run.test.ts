import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { exportPolicyCommand, type ExportedPolicy } from '../../src/cli/export-policy.js';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { exploitability, fromTable } from '../../src/games/exploitability.js';
import { leducPoker } from '../../src/games/leduc.js';
import { kuhnPoker } from '../../src/games/kuhn.js';
import { checkpointName } from '../../src/store/run.js';

type Row = Record<string, number>;
const metrics = (dir: string): Row[] =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** The shipped game config, shrunk to a few small iterations in `out`. */
function shipped(name: string, out: string, o: { iterations: number; games: number }): ExperimentInput {
  const c = parse(readFileSync(`configs/runs/games/${name}.yaml`, 'utf8')) as ExperimentInput;
  return {
    ...c,
    backend: 'cpu',
    iterations: o.iterations,
    outDir: out,
    tasks: { ...c.tasks, perIteration: o.games },
    eval: { every: 1 },
    checkpointEvery: 2,
  };
}

async function run(c: ExperimentInput, root: string, file = 'c.yaml'): Promise<string> {
  const path = join(root, file);
  writeFileSync(path, stringify(c));
  await runCommand(path, { set: [] });
  return join(root, c.name);
}

describe('games on an MLP through the loop (configs/runs/games)', function () {
  this.timeout(240000);

  it('kuhn.yaml: the sampled gradient to a moving magnet, the average policy, export-policy, and resume as if uninterrupted', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-mlp-'));
    const dir = await run(shipped('kuhn', root, { iterations: 4, games: 256 }), root);
    const rows = metrics(dir);
    const first = rows.find((r) => r.iteration === 0)!;
    const last = rows.find((r) => r.iteration === 4)!;
    // a fresh MLP is near uniform (Kuhn's uniform policy: exploitability 0.458), and four updates move it
    expect(first['eval/kuhn/exploitability']).to.be.closeTo(0.458, 0.01);
    expect(first['eval/kuhn/average_exploitability']).to.be.closeTo(first['eval/kuhn/exploitability'], 1e-12);
    expect(last['eval/kuhn/exploitability']).to.not.equal(first['eval/kuhn/exploitability']);
    expect(last['eval/kuhn/legal_mass']).to.equal(1);
    expect(last['turns/seat0']).to.be.at.least(256); // every game: seat 0 moves first
    expect(last['kl/main']).to.be.above(0); // the magnet's KL term is in the loss
    // the checkpoint keeps the moving magnet's table and the average
    const loop = JSON.parse(readFileSync(join(dir, 'checkpoints', checkpointName(4), 'loop.json'), 'utf8'));
    expect(Object.keys(loop.learners.main.magnet.table)).to.have.length(12);
    expect(loop.evaluators.kuhn.average.totals).to.have.length(12);
    expect(loop.states.length).to.equal(12); // the 'infostate' baseline of each information state
    // export-policy writes the average policy, whose exploitability is the run's own figure and recomputable
    const file = join(root, 'policy.json');
    await exportPolicyCommand(dir, { out: file });
    const exported = JSON.parse(readFileSync(file, 'utf8')) as ExportedPolicy;
    expect(exported.which).to.equal('average');
    expect(exported.exploitability).to.be.closeTo(last['eval/kuhn/average_exploitability'], 1e-9);
    expect(exported.lastExploitability).to.be.closeTo(last['eval/kuhn/exploitability'], 1e-9);
    expect(exploitability(kuhnPoker, fromTable(exported.policy))).to.be.closeTo(exported.exploitability!, 1e-12);
    // stopped after iteration 2 and resumed: the same numbers at 4 (models, optimizer, magnet, baselines, average)
    const half = mkdtempSync(join(tmpdir(), 'coevolve-mlp-half-'));
    const cut = await run(shipped('kuhn', half, { iterations: 2, games: 256 }), half);
    const stored = join(cut, 'config.yaml');
    writeFileSync(stored, readFileSync(stored, 'utf8').replace(/^iterations: 2$/m, 'iterations: 4'));
    await runCommand(undefined, { set: [], resume: cut });
    const resumed = metrics(cut).find((r) => r.iteration === 4)!;
    expect(resumed['eval/kuhn/exploitability']).to.equal(last['eval/kuhn/exploitability']);
    expect(resumed['eval/kuhn/average_exploitability']).to.equal(last['eval/kuhn/average_exploitability']);
  });

  it('leduc.yaml: the distilled MMD step fits the network to its targets and trains no sampled gradient', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-mlp-'));
    const c = shipped('leduc', root, { iterations: 2, games: 128 });
    const dir = await run({ ...c, trainer: { ...c.trainer, mmd: { eta: 0.02, fitSteps: 30, fitTol: 1e-5 } } }, root);
    const last = metrics(dir).find((r) => r.iteration === 2)!;
    expect(last.samples).to.equal(0); // distill fits the model itself
    expect(last['game/main/fit_steps']).to.be.within(1, 30);
    expect(last['game/main/fit_kl']).to.be.a('number').and.be.at.least(0);
    expect(last['game/main/states_updated']).to.be.above(20);
    expect(last['eval/leduc/exploitability']).to.be.below(2.374); // the uniform policy's, which the fresh MLP is near
    const file = join(root, 'policy.json');
    await exportPolicyCommand(dir, { out: file });
    const exported = JSON.parse(readFileSync(file, 'utf8')) as ExportedPolicy;
    expect(Object.keys(exported.policy)).to.have.length(936);
    expect(exploitability(leducPoker, fromTable(exported.policy))).to.be.closeTo(exported.exploitability!, 1e-12);
  });

  it('tictactoe.yaml: all-actions samples, exploring starts, the minimax evaluator and a greedy export', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-mlp-'));
    const dir = await run(shipped('tictactoe', root, { iterations: 2, games: 64 }), root);
    const rows = metrics(dir);
    const first = rows.find((r) => r.iteration === 0)!;
    const last = rows.find((r) => r.iteration === 2)!;
    for (const r of [first, last]) {
      expect(r['eval/perfect/losses']).to.equal(r['eval/perfect/losses_seat0'] + r['eval/perfect/losses_seat1']);
      expect(r['eval/perfect/losses'] + r['eval/perfect/draws']).to.be.at.most(400);
    }
    // one sample per legal move of every visited state: many more samples than moves played
    expect(last.samples).to.be.above(2 * (last['turns/seat0'] + last['turns/seat1']));
    // exploring starts: about half the games open with one to four random moves that are not turns
    const episodes = readFileSync(join(dir, 'episodes', 'shard-000000.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.iteration === 2);
    const opened = episodes.filter(
      (e) => (e.turns[0].state as string).slice(0, 9).replace(/\./g, '').length > 0,
    ).length;
    expect(opened / episodes.length).to.be.within(0.25, 0.75);
    const file = join(root, 'policy.json');
    await exportPolicyCommand(dir, { out: file });
    const exported = JSON.parse(readFileSync(file, 'utf8')) as ExportedPolicy;
    expect(exported.temperature).to.equal(0);
    expect(exported.vsMinimax!.losses).to.have.length(2);
    expect(Object.keys(exported.policy)).to.have.length(4520);
    for (const row of Object.values(exported.policy)) expect(Math.max(...Object.values(row))).to.equal(1);
  });

  it('a game model in the wrong place is refused before any work, naming its path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-mlp-'));
    const c = shipped('kuhn', root, { iterations: 1, games: 8 });
    const attempt = (over: Partial<ExperimentInput>) =>
      run({ ...c, ...over }, root).then(
        () => 'no error',
        (e: Error) => e.message,
      );
    const solve = {
      arena: { kind: 'solve' },
      roles: { solver: { kind: 'solver', model: 'main' } },
      judges: [{ kind: 'verifier' }],
      evaluators: [],
      tasks: { family: 'arithmetic', train: { source: 'generate' as const, count: 16 } },
    };
    expect(await attempt(solve)).to.match(
      /models\.main: kind 'mlp' reads feature vectors, and arena 'solve' gives text only/,
    );
    expect(existsSync(join(root, 'kuhn'))).to.equal(false);
    const mlp = c.models.main;
    expect(await attempt({ models: { main: { ...mlp, config: { dModel: 8 } } } })).to.match(
      /models\.main\.config: kind 'mlp'/,
    );
    expect(await attempt({ models: { main: { ...mlp, reference: true } } })).to.match(
      /models\.main\.reference: .*magnet/,
    );
    expect(await attempt({ models: { main: { kind: 'tinylm', magnet: { kind: 'uniform' } } } })).to.match(
      /models\.main\.magnet: only for kind 'mlp'/,
    );
  });

  it('opponents: the learner takes each seat in turn against snapshots from a pool, which resumes with the run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-mlp-'));
    const opponents = { roles: ['seat0', 'seat1'], sampling: 'uniform' as const, poolSize: 2, snapshotEvery: 1 };
    const c = { ...shipped('kuhn', root, { iterations: 4, games: 64 }), opponents };
    const dir = await run(c, root);
    const rows = metrics(dir).filter((r) => r.iteration > 0);
    expect(rows.map((r) => r['opponents/pool_size'])).to.deep.equal([1, 2, 2, 2]); // it0, then one a step, two kept
    for (const r of rows) expect(r['opponents/score']).to.be.within(0, 1);
    const episodes = readFileSync(join(dir, 'episodes', 'shard-000000.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.iteration === 4);
    // in every game one seat is the learner ('main') and the other a snapshot, the learner in each seat half the time
    const learnerSeats = episodes.map((e) => {
      const models = new Set<string>(e.turns.map((t: { role: string; model: string }) => `${t.role}=${t.model}`));
      const mine = [...models].filter((m) => m.endsWith('=main'));
      expect([...models].filter((m) => /=main@it[0-9]+$/.test(m)).length).to.be.at.least(1);
      return mine[0]?.split('=')[0];
    });
    expect(learnerSeats.filter((s) => s === 'seat0').length).to.equal(32);
    // only the learner's moves train
    const last = rows[rows.length - 1];
    const learnerTurns = episodes.flatMap((e) => e.turns.filter((t: { model: string }) => t.model === 'main')).length;
    expect(last.samples).to.equal(learnerTurns);
    // a run stopped at 2 and resumed reads its pool back and plays the same games
    const half = mkdtempSync(join(tmpdir(), 'coevolve-mlp-half-'));
    const cut = await run({ ...shipped('kuhn', half, { iterations: 2, games: 64 }), opponents }, half);
    const stored = join(cut, 'config.yaml');
    writeFileSync(stored, readFileSync(stored, 'utf8').replace(/^iterations: 2$/m, 'iterations: 4'));
    await runCommand(undefined, { set: [], resume: cut });
    const resumed = metrics(cut).find((r) => r.iteration === 4)!;
    expect(resumed['opponents/score']).to.equal(last['opponents/score']);
    expect(resumed['eval/kuhn/exploitability']).to.equal(last['eval/kuhn/exploitability']);
  });
});
