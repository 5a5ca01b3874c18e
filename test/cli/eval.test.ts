import { expect } from 'chai';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalCommand } from '../../src/cli/eval.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { saveModel } from '../../src/models/store.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { generateTasks, writeTasksJsonl } from '../../src/tasks/jsonl.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { HfTokenizer } from '../../src/models/hf/tokenizer.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { generate } from '../../src/models/generate.js';
import { SolverRole } from '../../src/core/solver.js';

describe('coevolve eval', () => {
  const dir = mkdtempSync(join(tmpdir(), 'coevolve-eval-'));
  const data = join(dir, 'tasks.jsonl');
  const base = {
    checkpoint: join(dir, 'm'),
    data,
    family: 'arithmetic',
    samples: 8,
    temperature: 1,
    maxNewTokens: 4,
    backend: TEST_BACKEND,
  };

  before(async () => {
    const tokenizer = new CharTokenizer();
    const model = new TinyLM({ vocabSize: tokenizer.size, dModel: 16, nHeads: 2, nLayers: 1, context: 16, seed: 3 });
    await saveModel(base.checkpoint, model, tokenizer);
    model.dispose();
    writeTasksJsonl(data, generateTasks(arithmetic, { digits: 1, operands: 2, operators: '+' }, 12, 1));
  });

  it('gives the same pass@1 and maj@N for the same seed', async () => {
    const a = await evalCommand({ ...base, seed: 4 });
    const b = await evalCommand({ ...base, seed: 4 });
    expect(a.tasks).to.equal(12);
    expect(b).to.deep.equal(a);
    // the untrained model answers at random: pass@1 and maj@N are shares of 12 tasks
    for (const v of [a.pass1, a.majN ?? -1, a.validRate])
      expect(Number.isInteger(v * 12) && v >= 0 && v <= 1).to.equal(true);
  });

  it('with 2 workers: the same greedy pass@1, and maj@N repeats from its seed', async () => {
    const one = await evalCommand({ ...base, seed: 4, workers: '1' });
    const two = await evalCommand({ ...base, seed: 4, workers: '2' });
    expect(two.pass1).to.equal(one.pass1);
    expect(two.validRate).to.equal(one.validRate);
    expect(await evalCommand({ ...base, seed: 4, workers: '2' })).to.deep.equal(two);
    const fail = await evalCommand({ ...base, workers: 'two' }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(fail).to.match(/--workers must be auto or a positive integer, got 'two'/);
  });

  it('refuses --max-new-tokens 0 and an empty task file', async () => {
    const fail = (o: object) =>
      evalCommand({ ...base, ...o }).then(
        () => 'no error',
        (e: Error) => e.message,
      );
    expect(await fail({ maxNewTokens: 0 })).to.match(/--max-new-tokens must be a positive integer, got 0/);
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '\n');
    expect(await fail({ data: empty })).to.match(/empty\.jsonl holds no tasks/);
  });

  it('refuses a task file without answers, naming the line', async () => {
    const unlabeled = join(dir, 'unlabeled.jsonl');
    writeFileSync(unlabeled, '{"prompt":"1+1=","answer":"2"}\n{"prompt":"2+2="}\n');
    let message = '';
    try {
      await evalCommand({ ...base, data: unlabeled });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).to.match(/line 2 has no answer/);
  });
});

describe('coevolve eval progress', function () {
  this.timeout(120000);

  it('draws a bar on a terminal that advances, with rate and time left, to every episode', async () => {
    const chunks: string[] = [];
    const stream = { isTTY: true, columns: 160, write: (s: string) => chunks.push(s) };
    // 256 tasks, greedy then 8 samples each: 2,304 episodes through the batching server
    await evalCommand({
      checkpoint: 'checkpoints/base-add2',
      data: 'checkpoints/base-add2/heldout.jsonl',
      family: 'arithmetic',
      samples: 8,
      temperature: 1,
      maxNewTokens: 5,
      backend: TEST_BACKEND,
      workers: '1',
      stream,
    });
    const draws = chunks.filter((c) => c.startsWith('\r'));
    const counts = draws.map((d) => Number(/ (\d+)\/2304 /.exec(d)?.[1]));
    expect(draws.length).to.be.above(2);
    expect(
      counts.every((c, i) => i === 0 || c > counts[i - 1]),
      counts.join(','),
    ).to.equal(true);
    expect(counts[counts.length - 1]).to.equal(2304);
    expect(draws[draws.length - 1])
      .to.include('100%')
      .and.match(/ eta \d+s [\d.]+(e\d+)? episode\/s/);
  });

  it('writes a few plain lines when the stream is not a terminal', async () => {
    const lines: string[] = [];
    await evalCommand({
      checkpoint: 'checkpoints/base-add2',
      data: 'checkpoints/base-add2/heldout.jsonl',
      family: 'arithmetic',
      samples: 1,
      temperature: 1,
      maxNewTokens: 5,
      backend: TEST_BACKEND,
      workers: '1',
      stream: { write: (s: string) => lines.push(s) },
    });
    expect(lines.length).to.be.within(5, 12); // a line per 10% of 512 episodes, not 512
    expect(lines[lines.length - 1]).to.equal('eval episode 512/512\n');
  });
});

describe('coevolve eval on a Hugging Face directory', function () {
  this.timeout(60000);
  const dir = mkdtempSync(join(tmpdir(), 'coevolve-eval-hf-'));
  const data = join(dir, 'tasks.jsonl');
  const model = writeTinyHf(join(dir, 'base'));

  it("answers through the chat template as a run's solver does: its pass@1 is what greedy generation from those prompts scores", async () => {
    const tasks = generateTasks(arithmetic, { digits: 1, operands: 2, operators: '+' }, 6, 2);
    writeTasksJsonl(data, tasks);
    const got = await evalCommand({
      checkpoint: model,
      data,
      family: 'arithmetic',
      samples: 0,
      temperature: 1,
      maxNewTokens: 4,
      backend: TEST_BACKEND,
    });
    expect(got.tasks).to.equal(6);
    // the same prompts made independently: the solver's instructions and the task as a conversation
    const tk = HfTokenizer.fromDirectory(model);
    const instructions = new SolverRole(arithmetic.parseAnswer).instructions;
    const prompts = tasks.map((t) =>
      tk.chatIds(
        [
          { role: 'system', content: instructions },
          { role: 'user', content: t.prompt },
        ],
        { addGenerationPrompt: true },
      ),
    );
    const policy = new HfPolicy(HfCausalLM.load(model));
    const outs = generate(policy, prompts, {
      maxNewTokens: 4,
      temperature: 0,
      eos: tk.endOfTurnIds[0],
      stop: tk.endOfTurnIds.slice(1),
    });
    const texts = outs.map((o) => (o.stopped ? tk.decode(o.tokens.slice(0, -1), { skipSpecialTokens: true }) : null));
    const right = tasks.filter((t, i) => texts[i] !== null && arithmetic.verify(t, texts[i]!.trim())).length;
    const valid = texts.filter((x) => x !== null && arithmetic.parseAnswer(x.trim()).valid).length;
    expect(got.pass1).to.equal(right / 6);
    expect(got.validRate).to.equal(valid / 6);
    policy.base.dispose();
  });

  it('with 2 workers (a replica of the frozen base in a second thread): the greedy figures of one thread, maj@N from its seed', async () => {
    const o = {
      checkpoint: model,
      data,
      family: 'arithmetic',
      samples: 2,
      temperature: 1,
      maxNewTokens: 4,
      backend: TEST_BACKEND,
      seed: 3,
    };
    const one = await evalCommand({ ...o, workers: '1' });
    const two = await evalCommand({ ...o, workers: '2' });
    expect({ pass1: two.pass1, validRate: two.validRate }).to.deep.equal({
      pass1: one.pass1,
      validRate: one.validRate,
    });
    expect(await evalCommand({ ...o, workers: '2' })).to.deep.equal(two);
  });

  it('refuses a directory without a tokenizer, saying why', async () => {
    const bare = join(dir, 'bare');
    mkdirSync(bare);
    for (const f of ['config.json', 'model.safetensors']) copyFileSync(join(model, f), join(bare, f));
    const err = await evalCommand({
      checkpoint: bare,
      data,
      family: 'arithmetic',
      samples: 0,
      temperature: 1,
      maxNewTokens: 4,
      backend: TEST_BACKEND,
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/has no tokenizer\.json: tasks are text/);
  });
});
