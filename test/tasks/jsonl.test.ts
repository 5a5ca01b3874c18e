import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  arithmetic,
  disjointSplit,
  generateTasks,
  readTasksJsonl,
  strings,
  writeTasksJsonl,
} from '../../src/tasks/index.js';
import type { Task } from '../../src/core/types.js';

describe('tasks/jsonl', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-tasks-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes raw text to a fresh file and returns its path. */
  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  describe('writeTasksJsonl / readTasksJsonl', () => {
    it('round-trips generated tasks', () => {
      const tasks = generateTasks(arithmetic, { operands: 3, operators: '+-*' }, 20, 1);
      const path = join(dir, 'sub', 'arith.jsonl');
      writeTasksJsonl(path, tasks);
      const lines = readFileSync(path, 'utf8').split('\n');
      expect(lines).to.have.length(21); // one per task plus the final newline
      expect(JSON.parse(lines[0])).to.deep.equal({
        id: tasks[0].id,
        family: 'arithmetic',
        prompt: tasks[0].prompt,
        answer: tasks[0].answer,
      });
      expect(readTasksJsonl(path, 'arithmetic')).to.deep.equal(tasks);
    });

    it('round-trips unlabeled tasks and awkward characters', () => {
      const tasks: Task[] = [
        { id: 'x-1', family: 'strings', prompt: 'say "hi" \\ bye', answer: 'a\tb' },
        { id: 'x-2', family: 'strings', prompt: 'rev:ab=' },
      ];
      const path = join(dir, 'odd.jsonl');
      writeTasksJsonl(path, tasks);
      const back = readTasksJsonl(path, 'strings');
      expect(back).to.deep.equal(tasks);
      expect('answer' in back[1]).to.equal(false);
    });

    it('skips blank lines and numbers default ids by physical line', () => {
      const path = file(
        'plain.jsonl',
        '{"prompt":"1+1=","answer":"2"}\n\n   \r\n{"prompt":"2+2="}\r\n{"prompt":"3+3=","id":"mine"}\n',
      );
      expect(readTasksJsonl(path, 'arithmetic')).to.deep.equal([
        { id: 'arithmetic-1', family: 'arithmetic', prompt: '1+1=', answer: '2' },
        { id: 'arithmetic-4', family: 'arithmetic', prompt: '2+2=' },
        { id: 'mine', family: 'arithmetic', prompt: '3+3=' },
      ]);
    });

    it('names the file, the line and the problem for a malformed line', () => {
      const good = '{"prompt":"1+1=","answer":"2"}\n';
      const cases: [string, RegExp][] = [
        [good + '\n{"prompt": "2+2=",\n', /:3: bad JSON/],
        [good + '{"answer":"2"}\n', /:2: field 'prompt': missing/],
        [good + good + '{"prompt":5}\n', /:3: field 'prompt': must be a string or a list of chat messages, got 5/],
        [good + '{"prompt":"x","answer":true}\n', /:2: field 'answer': must be a string or a number, got true/],
        ['[1,2]\n', /:1: expected an object/],
        ['"text"\n', /:1: expected an object/],
        ['{"prompt":"x","id":1.5}\n', /:1: field 'id': must be a string or an integer/],
        [
          '{"prompt":"x","family":"strings"}\n',
          /:1: field 'family': "strings" does not match the expected 'arithmetic'/,
        ],
        ['{"prompt":"x","id":"a"}\n{"prompt":"y","id":"a"}\n', /:2: field 'id': duplicate id 'a' \(first at .*:1\)/],
      ];
      cases.forEach(([text, msg], i) => {
        const path = file(`bad-${i}.jsonl`, text);
        expect(() => readTasksJsonl(path, 'arithmetic'), text).to.throw(msg);
        expect(() => readTasksJsonl(path, 'arithmetic'), text).to.throw(`${path}:`);
      });
    });

    it('reads an empty file as no tasks', () => {
      expect(readTasksJsonl(file('empty.jsonl', ''), 'strings')).to.deep.equal([]);
    });
  });

  describe('generateTasks', () => {
    it('validates the difficulty and the count', () => {
      expect(() => generateTasks(arithmetic, { operands: 1 }, 3, 0)).to.throw(/operands/);
      expect(() => generateTasks(arithmetic, {}, -1, 0)).to.throw(/n must be a non-negative integer/);
      expect(generateTasks(strings, {}, 0, 0)).to.deep.equal([]);
    });
  });

  describe('disjointSplit', () => {
    it('never puts a train prompt in test, even when collisions are common', () => {
      // 1-digit a+b has only 100 prompts, so 60 train draws cover much of the space.
      const { train, test } = disjointSplit(arithmetic, { digits: 1 }, 60, 30, 5);
      expect(train).to.have.length(60);
      expect(test).to.have.length(30);
      const seen = new Set(train.map((t) => t.prompt));
      expect(test.filter((t) => seen.has(t.prompt))).to.deep.equal([]);
      expect(new Set([...train, ...test].map((t) => t.id)).size).to.equal(90);
      expect(test[0].id).to.equal('arithmetic-test-0');
      expect(train[0].id).to.equal('arithmetic-train-0');
    });

    it('is reproducible, and train is the plain generateTasks draw', () => {
      const a = disjointSplit(strings, { maxLength: 3, alphabet: 2 }, 10, 4, 9);
      expect(disjointSplit(strings, { maxLength: 3, alphabet: 2 }, 10, 4, 9)).to.deep.equal(a);
      expect(a.train.map((t) => t.prompt)).to.deep.equal(
        generateTasks(strings, { maxLength: 3, alphabet: 2 }, 10, 9).map((t) => t.prompt),
      );
      const seen = new Set(a.train.map((t) => t.prompt));
      expect(a.test.some((t) => seen.has(t.prompt))).to.equal(false);
    });

    it('throws instead of hanging when train covers every prompt', () => {
      expect(() => disjointSplit(arithmetic, { digits: 1 }, 3000, 5, 1)).to.throw(
        /found only 0 of 5 test prompts.*too few distinct prompts/,
      );
    });
  });
});
