import { expect } from 'chai';
import { generateTasks, strings } from '../../src/tasks/index.js';
import type { StringsDifficulty } from '../../src/tasks/index.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import type { Task } from '../../src/core/types.js';

/** Splits `rev:abcd=` into its op tag and input. */
function parts(prompt: string): { tag: string; input: string } {
  const m = /^(rev|sort):([a-z]+)=$/.exec(prompt);
  if (!m) throw new Error(`malformed prompt ${prompt}`);
  return { tag: m[1], input: m[2] };
}

describe('tasks/strings', () => {
  const d: StringsDifficulty = { minLength: 2, maxLength: 7, alphabet: 5, ops: ['reverse', 'sort'] };

  describe('generate', () => {
    it('is reproducible from the seed and differs across seeds', () => {
      const a = generateTasks(strings, d, 50, 11);
      expect(generateTasks(strings, d, 50, 11)).to.deep.equal(a);
      expect(generateTasks(strings, d, 50, 12).map((t) => t.prompt)).to.not.deep.equal(a.map((t) => t.prompt));
    });

    it('respects lengths, alphabet and ops, and uses the whole range', () => {
      const tasks = generateTasks(strings, d, 500, 1);
      const lengths = new Set<number>();
      const letters = new Set<string>();
      const tags = new Set<string>();
      for (const t of tasks) {
        const { tag, input } = parts(t.prompt);
        lengths.add(input.length);
        [...input].forEach((c) => letters.add(c));
        tags.add(tag);
        expect(t.answer!.length).to.equal(input.length);
      }
      expect([...lengths].sort()).to.deep.equal([2, 3, 4, 5, 6, 7]);
      expect([...letters].sort().join('')).to.equal('abcde');
      expect([...tags].sort()).to.deep.equal(['rev', 'sort']);
    });

    it('uses only the ops asked for', () => {
      const rev = generateTasks(strings, { ops: ['reverse'] }, 100, 2);
      expect(rev.every((t) => t.prompt.startsWith('rev:'))).to.equal(true);
      const sorted = generateTasks(strings, { ops: ['sort'] }, 100, 2);
      expect(sorted.every((t) => t.prompt.startsWith('sort:'))).to.equal(true);
    });

    it('gives the exact transformed string as the answer', () => {
      for (const t of generateTasks(strings, { ...d, alphabet: 26, maxLength: 20 }, 300, 3)) {
        const { tag, input } = parts(t.prompt);
        const expected = tag === 'rev' ? input.split('').reverse().join('') : input.split('').sort().join('');
        expect(t.answer, t.prompt).to.equal(expected);
      }
    });

    it('handles a fixed length and a one-letter alphabet', () => {
      const tasks = generateTasks(strings, { minLength: 4, maxLength: 4, alphabet: 1, ops: ['sort'] }, 5, 0);
      for (const t of tasks) expect([t.prompt, t.answer]).to.deep.equal(['sort:aaaa=', 'aaaa']);
    });

    it('keeps every prompt and answer inside the default tokenizer', () => {
      const tok = new CharTokenizer();
      for (const t of generateTasks(strings, { alphabet: 26, maxLength: 30 }, 200, 4)) {
        expect(() => tok.encode(t.prompt + t.answer)).to.not.throw();
      }
    });
  });

  describe('parseAnswer', () => {
    it('accepts lowercase letters, trimmed', () => {
      expect(strings.parseAnswer('  dcba\n')).to.deep.equal({ valid: true, value: 'dcba' });
    });

    it('rejects everything else with a reason', () => {
      const cases: [string, RegExp][] = [
        ['', /empty answer/],
        ['ABC', /unexpected character "A" at position 0/],
        ['ab c', /unexpected character " " at position 2/],
        ['abc1', /unexpected character "1" at position 3/],
        ['rev:abc', /unexpected character ":"/],
      ];
      for (const [out, reason] of cases) {
        const r = strings.parseAnswer(out);
        expect(r.valid, out).to.equal(false);
        expect(r.value, out).to.equal(null);
        expect(r.error, out).to.match(reason);
      }
    });
  });

  describe('verify', () => {
    const task: Task = { id: 's-1', family: 'strings', prompt: 'rev:abcd=', answer: 'dcba' };

    it('accepts the right answer with surrounding spaces and rejects wrong ones', () => {
      expect(strings.verify(task, ' dcba ')).to.equal(true);
      for (const out of ['abcd', 'dcb', 'DCBA', 'dcba!', '']) expect(strings.verify(task, out), out).to.equal(false);
    });

    it('throws on a task without an answer', () => {
      expect(() => strings.verify({ id: 'u', family: 'strings', prompt: 'rev:ab=' }, 'ba')).to.throw(/no answer/);
    });
  });

  describe('validate', () => {
    it('fills missing fields from the defaults and copies ops', () => {
      const ops: ('reverse' | 'sort')[] = ['sort'];
      const v = strings.validate({ ops, maxLength: 9 });
      expect(v).to.deep.equal({ ...strings.defaults, ops: ['sort'], maxLength: 9 });
      ops.push('reverse');
      expect(v.ops).to.deep.equal(['sort']);
    });

    it('names the offending field', () => {
      const cases: [unknown, RegExp][] = [
        [{ minLength: 0 }, /minLength/],
        [{ minLength: 5, maxLength: 4 }, /maxLength: must be at least minLength \(5\), got 4/],
        [{ alphabet: 27 }, /alphabet/],
        [{ ops: [] }, /ops: a non-empty list of ops/],
        [{ ops: 'reverse' }, /ops: expected array, received string/],
        [
          { ops: ['reverse', 'shuffle'] },
          /tasks\.difficulty\.ops\.1: expected one of "reverse", "sort", received "shuffle"/,
        ],
        [{ ops: ['sort', 'sort'] }, /ops\.1: lists 'sort' twice/],
        [{ length: 3 }, /tasks\.difficulty\.length: unrecognized key/],
      ];
      for (const [bad, msg] of cases) expect(() => strings.validate(bad), JSON.stringify(bad)).to.throw(msg);
    });
  });
});
