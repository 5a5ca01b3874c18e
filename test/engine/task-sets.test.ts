import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExperimentConfig } from '../../src/config/schema.js';
import type { Task } from '../../src/core/types.js';
import { loadTaskSets } from '../../src/engine/task-sets.js';
import { arithmetic, writeTasksJsonl } from '../../src/tasks/index.js';
import { taskFamily } from '../../src/registry.js';

type Source = { source: 'generate'; count: number } | { source: 'file'; path: string };

/** The part of a config loadTaskSets reads. One-digit sums: only 100 prompts, so sets overlap unless kept apart. */
function config(train: Source, ev: Source): ExperimentConfig {
  const tasks = {
    family: 'arithmetic',
    difficulty: { digits: 1, operands: 2, operators: '+' },
    train,
    eval: ev,
    perIteration: 4,
  };
  return { seed: 3, tasks } as unknown as ExperimentConfig;
}

const sum = (a: number, b: number, id: string): Task => ({
  id,
  family: 'arithmetic',
  prompt: `${a}+${b}=`,
  answer: String(a + b),
});
const prompts = (tasks: readonly Task[]) => tasks.map((t) => t.prompt);

describe('engine/loadTaskSets', () => {
  let dir: string;
  let trainFile: string;
  let evalFile: string;
  const trainTasks = [sum(1, 1, 't0'), sum(1, 2, 't1'), sum(2, 2, 't2'), sum(3, 4, 't3')];
  const evalTasks = [sum(1, 2, 'e0'), sum(3, 4, 'e1'), sum(5, 5, 'e2')]; // shares 1+2= and 3+4= with train

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-task-sets-'));
    trainFile = join(dir, 'train.jsonl');
    evalFile = join(dir, 'eval.jsonl');
    writeTasksJsonl(trainFile, trainTasks);
    writeTasksJsonl(evalFile, evalTasks);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('two generated sets share no prompt', async () => {
    const { train, evalSet } = await loadTaskSets(
      config({ source: 'generate', count: 60 }, { source: 'generate', count: 20 }),
      arithmetic,
    );
    expect([train.length, evalSet.length]).to.deep.equal([60, 20]);
    const held = new Set(prompts(evalSet));
    expect(prompts(train).filter((p) => held.has(p))).to.deep.equal([]);
  });

  it('drops the training tasks whose prompt is in a different eval file', async () => {
    // guards against: skipping the filter, which lets eval prompts leak into training
    const { train, evalSet } = await loadTaskSets(
      config({ source: 'file', path: trainFile }, { source: 'file', path: evalFile }),
      arithmetic,
    );
    expect(prompts(evalSet)).to.deep.equal(prompts(evalTasks));
    expect(train.map((t) => t.id)).to.deep.equal(['t0', 't2']);
  });

  it('drops generated training tasks whose prompt is in the eval file', async () => {
    // guards against: skipping the filter when only the eval set comes from a file
    const { train } = await loadTaskSets(
      config({ source: 'generate', count: 200 }, { source: 'file', path: evalFile }),
      arithmetic,
    );
    const held = new Set(prompts(evalTasks));
    expect(train.length).to.be.below(200); // some of 200 draws from 100 prompts hit the 3 eval ones
    expect(prompts(train).filter((p) => held.has(p))).to.deep.equal([]);
  });

  it('keeps every task when train and eval name the same file (TTRL)', async () => {
    const { train, evalSet } = await loadTaskSets(
      config({ source: 'file', path: trainFile }, { source: 'file', path: trainFile }),
      arithmetic,
    );
    expect(train.map((t) => t.id)).to.deep.equal(trainTasks.map((t) => t.id));
    expect(evalSet.map((t) => t.id)).to.deep.equal(trainTasks.map((t) => t.id));
  });

  it('refuses a training file whose every prompt is in the eval file', async () => {
    const inside = join(dir, 'inside.jsonl');
    writeTasksJsonl(inside, [sum(1, 2, 'x0'), sum(5, 5, 'x1')]);
    const error = await loadTaskSets(
      config({ source: 'file', path: inside }, { source: 'file', path: evalFile }),
      arithmetic,
    ).catch((e: Error) => e);
    expect(String(error)).to.match(/every training task is also in tasks.eval/);
  });

  it("reads a Parquet file through the config's field map, GSM8K's answer after ####", async () => {
    const c = {
      seed: 1,
      tasks: {
        family: 'math',
        difficulty: {},
        train: {
          source: 'file',
          path: 'test/fixtures/data/gsm8k-mini.parquet',
          fields: { prompt: 'question', answer: { field: 'answer', after: '####' } },
        },
        perIteration: 2,
      },
    } as unknown as ExperimentConfig;
    const { train, evalSet } = await loadTaskSets(c, taskFamily('math'));
    expect(train.map((t) => t.answer)).to.deep.equal(['31', '2,400', '6']);
    expect(evalSet).to.deep.equal([]);
    expect(taskFamily('math').verify(train[1], 'It sells \\boxed{2400} apples')).to.equal(true);
  });
});
