import { expect } from 'chai';
import { arithmetic, evaluateArithmetic, generateTasks } from '../../src/tasks/index.js';
import type { ArithmeticDifficulty } from '../../src/tasks/index.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import type { Task } from '../../src/core/types.js';

/** Splits a generated prompt into operands and operators. */
function parts(prompt: string): { nums: string[]; ops: string[] } {
  if (!prompt.endsWith('=')) throw new Error(`prompt ${prompt} does not end in '='`);
  const body = prompt.slice(0, -1);
  return { nums: body.split(/[+\-*]/), ops: body.replace(/[0-9]/g, '').split('') };
}

/** An independent reference: split into +/- terms, each a product, in plain numbers. */
function reference(prompt: string): number {
  const terms = prompt.slice(0, -1).match(/[+-]?[0-9*]+/g)!;
  return terms.reduce((sum, t) => {
    const sign = t[0] === '-' ? -1 : 1;
    const product = t.replace(/^[+-]/, '').split('*').reduce((p, x) => p * Number(x), 1);
    return sum + sign * product;
  }, 0);
}

describe('tasks/arithmetic', () => {
  describe('evaluateArithmetic', () => {
    it('applies * before + and -, left to right otherwise (hand-checked)', () => {
      expect(evaluateArithmetic('2+3*4')).to.equal(14n);
      expect(evaluateArithmetic('10-2*3-4')).to.equal(0n);
      expect(evaluateArithmetic('3-10')).to.equal(-7n);
      expect(evaluateArithmetic('12+7*3=')).to.equal(33n);
      expect(evaluateArithmetic('5-3-1')).to.equal(1n);
      expect(evaluateArithmetic('2*3*4-1')).to.equal(23n);
      expect(evaluateArithmetic('0*7+0')).to.equal(0n);
    });

    it('is exact past 2^53', () => {
      expect(evaluateArithmetic('9999*9999*9999*9999*9999*9999')).to.equal(9999n ** 6n);
    });

    it('throws on anything but numbers joined by + - *', () => {
      for (const bad of ['', '1+', '+1', '1++2', '1/2', 'print(1)', '1 + 2', '-3']) {
        expect(() => evaluateArithmetic(bad), bad).to.throw(/arithmetic: (expected a number|unexpected)/);
      }
    });
  });

  describe('generate', () => {
    const all: ArithmeticDifficulty = { digits: 3, operands: 4, operators: '+-*', scratchpad: false };

    it('is reproducible from the seed and differs across seeds', () => {
      const a = generateTasks(arithmetic, all, 50, 7);
      expect(generateTasks(arithmetic, all, 50, 7)).to.deep.equal(a);
      const b = generateTasks(arithmetic, all, 50, 8);
      expect(b.map((t) => t.prompt)).to.not.deep.equal(a.map((t) => t.prompt));
    });

    it('names tasks by family and index', () => {
      const tasks = generateTasks(arithmetic, {}, 3, 1);
      expect(tasks.map((t) => t.id)).to.deep.equal(['arithmetic-0', 'arithmetic-1', 'arithmetic-2']);
      expect(tasks.every((t) => t.family === 'arithmetic')).to.equal(true);
    });

    it('respects operand count, digit limit and operator set at every setting', () => {
      for (const digits of [1, 2, 3, 4]) {
        for (const operands of [2, 3, 6]) {
          for (const operators of ['+', '-', '*', '+-', '+-*']) {
            const tasks = generateTasks(arithmetic, { digits, operands, operators }, 200, digits * 100 + operands);
            const usedOps = new Set<string>();
            let longest = 0;
            // Collect violations and assert once: thousands of chai calls are slow.
            const bad: string[] = [];
            for (const t of tasks) {
              const { nums, ops } = parts(t.prompt);
              if (nums.length !== operands) bad.push(t.prompt);
              for (const n of nums) {
                if (!/^(0|[1-9][0-9]*)$/.test(n) || n.length > digits) bad.push(t.prompt);
                longest = Math.max(longest, n.length);
              }
              ops.forEach((op) => usedOps.add(op));
            }
            expect(bad, `digits ${digits}, operands ${operands}`).to.deep.equal([]);
            expect(longest, `digits ${digits}`).to.equal(digits);
            expect([...usedOps].sort().join('')).to.equal([...operators].sort().join(''));
          }
        }
      }
    });

    it('answers match an independent evaluation, negatives included', () => {
      const tasks = generateTasks(arithmetic, { digits: 2, operands: 4, operators: '+-*' }, 300, 3);
      for (const t of tasks) expect(t.answer, t.prompt).to.equal(String(reference(t.prompt)));
      expect(tasks.some((t) => t.answer!.startsWith('-'))).to.equal(true);
    });

    it('keeps every prompt and answer inside the default tokenizer', () => {
      const tok = new CharTokenizer();
      for (const t of generateTasks(arithmetic, { digits: 4, operands: 6, operators: '+-*' }, 200, 5)) {
        expect(() => tok.encode(t.prompt + t.answer)).to.not.throw();
        expect(arithmetic.parseAnswer(t.answer!).valid, t.answer).to.equal(true);
      }
    });
  });

  describe('parseAnswer', () => {
    it('accepts canonical integers, trimmed', () => {
      for (const [out, value] of [['0', '0'], ['14', '14'], ['-7', '-7'], ['  14 ', '14'], ['\n-120\n', '-120']]) {
        expect(arithmetic.parseAnswer(out), out).to.deep.equal({ valid: true, value });
      }
    });

    it('rejects everything else with a reason', () => {
      const cases: [string, RegExp][] = [
        ['12a', /unexpected character "a" at position 2/],
        ['', /empty answer/],
        ['   ', /empty answer/],
        ['007', /leading zero/],
        ['-05', /leading zero/],
        ['1+1', /unexpected character "\+" at position 1.*not an expression/],
        ['print(1)', /unexpected character "p" at position 0/],
        ['-', /'-' must be followed by digits/],
        ['-0', /write 0/],
        ['+5', /unexpected character "\+"/],
        ['1 2', /unexpected character " "/],
        ['1.0', /unexpected character "\."/],
      ];
      for (const [out, reason] of cases) {
        const r = arithmetic.parseAnswer(out);
        expect(r.valid, out).to.equal(false);
        expect(r.value, out).to.equal(null);
        expect(r.error, out).to.match(reason);
      }
    });

    it('never runs the output as code', () => {
      const r = arithmetic.parseAnswer('(globalThis.__coevolvePwned = 1)');
      expect(r.valid).to.equal(false);
      expect((globalThis as Record<string, unknown>).__coevolvePwned).to.equal(undefined);
    });
  });

  describe('verify', () => {
    const task: Task = { id: 'a-1', family: 'arithmetic', prompt: '2+3*4=', answer: '14' };

    it('accepts the right answer, surrounding whitespace included', () => {
      for (const out of ['14', ' 14 ', '14\n']) expect(arithmetic.verify(task, out), out).to.equal(true);
    });

    it('rejects wrong and unparseable answers', () => {
      for (const out of ['15', '-14', '014', '2+3*4', '14a', '', '20']) expect(arithmetic.verify(task, out), out).to.equal(false);
    });

    it('throws on a task without an answer or from another family', () => {
      expect(() => arithmetic.verify({ id: 'u', family: 'arithmetic', prompt: '1+1=' }, '2')).to.throw(/no answer/);
      expect(() => arithmetic.verify({ ...task, family: 'strings' }, '14')).to.throw(/family 'strings'/);
    });
  });

  describe('validate', () => {
    it('fills missing fields from the defaults', () => {
      expect(arithmetic.validate(undefined)).to.deep.equal({ digits: 2, operands: 2, operators: '+', scratchpad: false });
      expect(arithmetic.validate({ operands: 3 })).to.deep.equal({ digits: 2, operands: 3, operators: '+', scratchpad: false });
    });

    it('names the offending field', () => {
      const cases: [unknown, RegExp][] = [
        [{ operands: 1 }, /operands must be an integer in 2\.\.6, got 1/],
        [{ operands: 7 }, /operands/],
        [{ digits: 0 }, /digits/],
        [{ digits: 2.5 }, /digits/],
        [{ digits: '2' }, /digits/],
        [{ operators: '' }, /operators/],
        [{ operators: '/' }, /operators.*"\/"/],
        [{ operators: '++' }, /operators lists "\+" twice/],
        [{ operand: 3 }, /unknown difficulty field 'operand'; known: digits, operands, operators/],
        [null, /difficulty must be an object/],
        [[2, 2], /difficulty must be an object/],
      ];
      for (const [d, msg] of cases) expect(() => arithmetic.validate(d), JSON.stringify(d)).to.throw(msg);
    });

    it('protects the shared defaults from callers', () => {
      expect(Object.isFrozen(arithmetic.defaults)).to.equal(true);
    });
  });
});
