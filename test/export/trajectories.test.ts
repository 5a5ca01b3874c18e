import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExperiment } from '../../src/engine/experiment.js';
import { exportRun, readTrajectories } from '../../src/export/trajectories.js';
import { RunStore } from '../../src/store/run.js';
import { arithmetic } from '../../src/tasks/index.js';
import { tinyConfig } from '../engine/fixtures.js';

describe('coevolve export', function () {
  this.timeout(60000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-export-'));
  const run = join(root, 'run');
  const quiet = { write: () => true };

  before(async () => {
    await runExperiment(
      {
        ...tinyConfig(root),
        workers: 1,
        judges: [{ kind: 'verifier', options: { correct: 1, wrong: 0, invalid: -0.5 } }],
      },
      { out: run, log: () => {} },
    );
  });

  it('writes every stored turn with its prompt, completion, reward and advantage, and reads it back', async () => {
    const out = join(root, 'a.jsonl');
    const n = await exportRun(run, out, { stream: quiet });
    const rows = readTrajectories(out);
    const store = await RunStore.open(run);
    const episodes = store.readEpisodes();
    expect(n).to.equal(rows.length);
    expect(rows.length).to.equal(episodes.reduce((a, e) => a + e.turns.length, 0));
    expect(rows.length).to.equal(4 * 4 * 4); // 4 iterations x 4 tasks x groups of 4
    for (const r of rows) {
      const e = episodes.find((x) => x.id === r.episode && x.iteration === r.iteration)!;
      expect(r.prompt).to.equal(e.task.prompt); // the solver renders the task's prompt; role token and BOS dropped
      expect(r.reward_model.ground_truth).to.equal(e.task.answer);
      expect(r.data_source).to.equal('arithmetic');
      // the verifier's reward: 1 right, 0 wrong, -0.5 unreadable
      expect(r.reward).to.equal(!r.valid ? -0.5 : arithmetic.verify(e.task, r.completion) ? 1 : 0);
    }
    // GRPO: within each group the advantages of the trained turns sum to zero
    const trained = rows.filter((r) => r.advantage !== null);
    expect(trained.length).to.be.above(0);
    const byGroup = new Map<string, number>();
    for (const r of trained)
      byGroup.set(`${r.iteration}/${r.group}`, (byGroup.get(`${r.iteration}/${r.group}`) ?? 0) + r.advantage!);
    for (const [g, sum] of byGroup) expect(Math.abs(sum), g).to.be.below(1e-6);
  });

  it('never overwrites a file, and a damaged file is refused naming its line', async () => {
    const out = join(root, 'b.jsonl');
    writeFileSync(out, 'mine\n');
    const err = await exportRun(run, out, { stream: quiet }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/EEXIST/);
    expect(readFileSync(out, 'utf8')).to.equal('mine\n');
    const good = join(root, 'c.jsonl');
    await exportRun(run, good, { stream: quiet });
    const lines = readFileSync(good, 'utf8').split('\n');
    lines[2] = JSON.stringify({ ...JSON.parse(lines[2]), reward: 'high' });
    writeFileSync(good, lines.join('\n'));
    expect(() => readTrajectories(good)).to.throw(/c\.jsonl:3: reward: /);
  });
});
