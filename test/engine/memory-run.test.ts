import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

/** A shipped memory config cut to two small iterations on one thread, over short dialogues. */
function memoryRun(file: string, out: string): string {
  const c = parse(readFileSync(file, 'utf8')) as ExperimentInput;
  Object.assign(c, {
    iterations: 2,
    outDir: out,
    workers: 1,
    backend: TEST_BACKEND,
    eval: { every: 2 },
    checkpointEvery: 2,
  });
  c.tasks.perIteration = 2;
  c.tasks.difficulty = { ...c.tasks.difficulty, sessions: 2 };
  c.evaluators = [
    { kind: 'memory-qa', name: 'heldout', options: { count: 4 } },
    { kind: 'memory-qa', name: 'keep-last', options: { count: 4, manager: 'keep-last' } },
  ];
  const path = join(out, 'c.yaml');
  writeFileSync(path, stringify(c));
  return path;
}

const rows = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const episodes = (dir: string) =>
  readFileSync(join(dir, 'episodes', readdirSync(join(dir, 'episodes')).sort()[0]), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('a memory run', function () {
  this.timeout(240000);

  it('re-rollouts: trains the manager on per-operation outcomes in groups of one state, and the answer agent on its answers', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-memory-'));
    await runCommand(memoryRun('configs/runs/memory/rerollout.yaml', root), { set: [] });
    const dir = join(root, 'memory-rerollout');
    const last = rows(dir).find((r) => r.iteration === 2);
    expect(last['losses/manager/loss']).to.be.a('number');
    expect(last['losses/answer/loss']).to.be.a('number');
    // 2 dialogues x 6 turns x 4 alternatives
    expect(last['turns/memory']).to.equal(48);
    for (const k of [
      'memory/valid_rate',
      'memory/probe_accuracy',
      'eval/heldout/qa_accuracy',
      'eval/keep-last/qa_accuracy',
    ])
      expect(last[k], k).to.be.within(0, 1);
    const memoryTurns = episodes(dir).flatMap((e: { turns: { role: string; compare?: string; outcome?: number }[] }) =>
      e.turns.filter((t) => t.role === 'memory'),
    );
    expect(new Set(memoryTurns.map((t: { compare?: string }) => t.compare))).to.deep.equal(
      new Set(['episode:s1', 'episode:s2', 'episode:s3', 'episode:s4', 'episode:s5', 'episode:s6']),
    );
  });

  it('plain outcome: every operation of an episode earns its QA accuracy, compared across the group', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-memory-'));
    await runCommand(memoryRun('configs/runs/memory/outcome.yaml', root), { set: [] });
    const dir = join(root, 'memory-outcome');
    const last = rows(dir).find((r) => r.iteration === 2);
    expect(last['turns/memory']).to.equal(48); // 2 dialogues x 4 episodes x 6 turns
    expect(last['memory/probe_accuracy']).to.equal(undefined);
    for (const e of episodes(dir) as Array<{
      outcome: { memory: number };
      turns: { role: string; action: { valid: boolean }; outcome?: number }[];
    }>) {
      for (const t of e.turns.filter((x) => x.role === 'memory'))
        expect(t.outcome).to.equal(t.action.valid ? undefined : -1);
      expect(e.outcome.memory).to.be.within(0, 1);
    }
  });
});
