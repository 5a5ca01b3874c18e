import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { readTaskFile } from '../../src/tasks/dataset.js';
import { readTasksJsonl, writeTasksJsonl } from '../../src/tasks/jsonl.js';
import { configuredSystem } from '../../src/core/prompt.js';
import { TaskSourceSchema } from '../../src/config/schema.js';
import { GSM8K_MINI } from '../fixtures/data/make.js';

const GSM8K = 'test/fixtures/data/gsm8k-mini.parquet';
const gsmFields = { prompt: 'question', answer: { field: 'answer', after: '####' } };

async function refusal(p: Promise<unknown>): Promise<string> {
  const r = await p.then(
    () => 'no error',
    (e: Error) => e.message,
  );
  return r;
}

describe('tasks/dataset', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-dataset-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("reads GSM8K's Parquet columns through a field map, the answer after the last ####", async () => {
    const tasks = await readTaskFile(GSM8K, 'math', { fields: gsmFields });
    expect(tasks.map((t) => [t.id, t.prompt, t.answer])).to.deep.equal([
      ['math-1', GSM8K_MINI[0].question, '31'],
      ['math-2', GSM8K_MINI[1].question, '2,400'],
      ['math-3', GSM8K_MINI[2].question, '6'],
    ]);
    expect(tasks[0].fields).to.equal(undefined); // every column was mapped
  });

  it('keeps unmapped Parquet columns as fields, int64 as numbers, and takes an integer id column', async () => {
    const path = join(dir, 'countdown.parquet');
    parquetWriteFile({
      filename: path,
      columnData: [
        { name: 'idx', data: [10n, 11n], type: 'INT64' },
        { name: 'q', data: ['make 7 from 3 4', 'make 1 from 5 4'], type: 'STRING' },
        { name: 'target', data: [7, 1], type: 'INT32' },
        { name: 'sys', data: ['Think first.', 'Be brief.'], type: 'STRING' },
      ],
    });
    const tasks = await readTaskFile(path, 'countdown', {
      fields: { prompt: 'q', answer: 'target', id: 'idx', system: 'sys' },
    });
    expect(tasks).to.deep.equal([
      { id: '10', family: 'countdown', prompt: 'make 7 from 3 4', answer: '7', system: 'Think first.' },
      { id: '11', family: 'countdown', prompt: 'make 1 from 5 4', answer: '1', system: 'Be brief.' },
    ]);
    const kept = await readTaskFile(path, 'countdown', { fields: { prompt: 'q', answer: 'target' } });
    expect(kept[1].fields).to.deep.equal({ idx: 11, sys: 'Be brief.' });
  });

  it('refuses a Parquet row with a missing prompt, naming the file, the row and the column', async () => {
    const path = join(dir, 'holes.parquet');
    parquetWriteFile({
      filename: path,
      columnData: [
        { name: 'question', data: ['one', null, 'three'], type: 'STRING' },
        { name: 'answer', data: ['#### 1', '#### 2', '#### 3'], type: 'STRING' },
      ],
    });
    expect(await refusal(readTaskFile(path, 'math', { fields: gsmFields }))).to.equal(
      `${path}: row 2: field 'question': missing`,
    );
  });

  it('refuses an answer without its marker, and a file that is not Parquet', async () => {
    const path = file('nomark.jsonl', '{"question":"q","answer":"#### 4"}\n{"question":"r","answer":"5"}\n');
    expect(await refusal(readTaskFile(path, 'math', { fields: gsmFields }))).to.equal(
      `${path}:2: field 'answer': has no '####' before the answer: "5"`,
    );
    const fake = file('fake.parquet', 'not parquet at all');
    expect(await refusal(readTaskFile(fake, 'math'))).to.match(/fake\.parquet: not a Parquet file/);
  });

  it('reads chat-message prompts: the user message is the prompt, a system message goes with the task', async () => {
    const chat = [
      { role: 'system', content: 'Answer in \\boxed{}.' },
      { role: 'user', content: 'What is 2+2?' },
    ];
    const path = file('chat.jsonl', JSON.stringify({ prompt: chat, answer: '4', level: 1 }) + '\n');
    const [task] = await readTaskFile(path, 'math');
    expect(task).to.deep.equal({
      id: 'math-1',
      family: 'math',
      prompt: 'What is 2+2?',
      system: 'Answer in \\boxed{}.',
      answer: '4',
      fields: { level: 1 },
    });
    // and back: the writer keeps the system message in the chat form and the fields beside it
    const out = join(dir, 'chat-out.jsonl');
    writeTasksJsonl(out, [task]);
    expect(readTasksJsonl(out, 'math')).to.deep.equal([task]);
  });

  it('refuses chat prompts it cannot render as one system and one user message', async () => {
    const cases: [unknown, RegExp][] = [
      [[{ role: 'assistant', content: 'hi' }], /got roles assistant/],
      [
        [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
        /got roles user,assistant,user/,
      ],
      [[{ role: 'user', content: 3 }], /message 1 must be \{role, content\}/],
      [[], /got roles \(none\)/],
    ];
    for (const [prompt, msg] of cases) {
      const path = file('bad-chat.jsonl', JSON.stringify({ prompt }) + '\n');
      const error = await refusal(readTaskFile(path, 'math'));
      expect(error).to.match(msg).and.to.contain(`${path}:1: field 'prompt':`);
    }
    const both = file(
      'two-systems.jsonl',
      JSON.stringify({
        prompt: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'u' },
        ],
        sys: 't',
      }) + '\n',
    );
    expect(await refusal(readTaskFile(both, 'math', { fields: { system: 'sys' } }))).to.match(
      /field 'sys': a system message, and the prompt has one too/,
    );
  });

  it("a role's config system wins over the dataset's, which only a role that answers tasks sees", () => {
    const task = { id: 't', family: 'math', prompt: 'p', system: 'from data' };
    expect(configuredSystem({ answersTasks: true }, 'from config', task)).to.equal('from config');
    expect(configuredSystem({ answersTasks: true }, undefined, task)).to.equal('from data');
    expect(configuredSystem({}, undefined, task)).to.equal(undefined);
  });

  it('the config takes a field map for a file source only', () => {
    const ok = TaskSourceSchema.safeParse({ source: 'file', path: 'x.parquet', fields: gsmFields });
    expect(ok.success).to.equal(true);
    const gen = TaskSourceSchema.safeParse({ source: 'generate', count: 3, fields: { prompt: 'q' } });
    expect(gen.success).to.equal(false);
    expect(JSON.stringify(gen.error?.issues)).to.contain("only for source 'file'");
    const typo = TaskSourceSchema.safeParse({ source: 'file', path: 'x', fields: { answer: { feild: 'a' } } });
    expect(typo.success).to.equal(false);
  });
});
