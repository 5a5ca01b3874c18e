import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { tasksCommand } from '../../src/cli/tasks.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { disjointSplit, readTasksJsonl } from '../../src/tasks/jsonl.js';

describe('coevolve tasks', () => {
  it('writes distinct tasks and skips every prompt a pretraining config used', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coevolve-tasks-'));
    const difficulty = { digits: 1, operands: 2, operators: '+' };
    const pretrain = {
      name: 'p',
      seed: 2,
      task: { family: 'arithmetic', difficulty },
      corpus: { train: 40, heldOut: 10 },
      model: { dModel: 8, nHeads: 2, nLayers: 1, context: 8 },
      train: { steps: 1, batchSize: 1, lr: 0.1 },
      out: join(dir, 'ckpt'),
    };
    writeFileSync(join(dir, 'p.yaml'), stringify(pretrain));
    const out = join(dir, 'unseen.jsonl');
    tasksCommand({
      family: 'arithmetic',
      difficulty: JSON.stringify(difficulty),
      count: 30,
      seed: 9,
      out,
      excludePretrain: join(dir, 'p.yaml'),
    });
    const tasks = readTasksJsonl(out, 'arithmetic');
    const { train, test } = disjointSplit(arithmetic, difficulty, 40, 10, 2);
    const used = new Set([...train, ...test].map((t) => t.prompt));
    expect(tasks).to.have.length(30);
    expect(new Set(tasks.map((t) => t.prompt)).size).to.equal(30);
    expect(tasks.filter((t) => used.has(t.prompt))).to.deep.equal([]);
    const other = join(dir, 'other.jsonl');
    expect(() => tasksCommand({ family: 'arithmetic', difficulty: '{digits', count: 1, seed: 1, out: other })).to.throw(
      /--difficulty must be JSON/,
    );
    expect(() =>
      tasksCommand({ family: 'arithmetic', difficulty: JSON.stringify(difficulty), count: 200, seed: 1, out: other }),
    ).to.throw(/found only 100 of 200 distinct/);
  });

  it('skips the prompts of every --exclude file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coevolve-tasks-'));
    const first = join(dir, 'a.jsonl');
    tasksCommand({ family: 'arithmetic', difficulty: '{"digits":1}', count: 60, seed: 1, out: first });
    const rest = join(dir, 'b.jsonl');
    tasksCommand({ family: 'arithmetic', difficulty: '{"digits":1}', count: 40, seed: 2, out: rest, exclude: [first] });
    const a = new Set(readTasksJsonl(first, 'arithmetic').map((t) => t.prompt));
    const b = readTasksJsonl(rest, 'arithmetic').map((t) => t.prompt);
    expect(b.filter((p) => a.has(p))).to.deep.equal([]);
    expect(() =>
      tasksCommand({
        family: 'arithmetic',
        difficulty: '{"digits":1}',
        count: 1,
        seed: 3,
        out: join(dir, 'c.jsonl'),
        exclude: [first, rest],
      }),
    ).to.throw(/found only 0 of 1/);
  });

  it('refuses to overwrite an existing file unless told to', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'coevolve-tasks-')), 'mine.jsonl');
    writeFileSync(out, 'my notes\n');
    const o = { family: 'arithmetic', difficulty: '{}', count: 5, seed: 1, out };
    expect(() => tasksCommand(o)).to.throw(/mine\.jsonl exists; pass --overwrite/);
    expect(readFileSync(out, 'utf8')).to.equal('my notes\n');
    tasksCommand({ ...o, overwrite: true });
    expect(readTasksJsonl(out, 'arithmetic')).to.have.length(5);
  });
});
