import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { arithmetic, disjointSplit, evaluateArithmetic, generateTasks } from '../../src/tasks/index.js';
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
    const product = t
      .replace(/^[+-]/, '')
      .split('*')
      .reduce((p, x) => p * Number(x), 1);
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
    const all: ArithmeticDifficulty = { digits: 3, minDigits: 1, operands: 4, operators: '+-*', scratchpad: false };

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

    it('draws each operand of minDigits..digits digits, every length in that range', () => {
      for (const [digits, minDigits] of [
        [3, 3],
        [3, 2],
        [4, 2],
        [1, 1],
      ]) {
        const lengths = new Set<number>();
        for (const t of generateTasks(
          arithmetic,
          { digits, minDigits, operands: 2, operators: '+' },
          300,
          digits + minDigits,
        )) {
          for (const n of parts(t.prompt).nums) lengths.add(n.length);
        }
        expect([...lengths].sort(), `digits ${digits}, minDigits ${minDigits}`).to.deep.equal(
          Array.from({ length: digits - minDigits + 1 }, (_, i) => minDigits + i),
        );
      }
    });

    it('with minDigits 1 (the default) draws exactly what it drew before minDigits existed', () => {
      // Recorded from the generator before minDigits was added: shipped corpora must not move.
      const hash = (tasks: Task[]) =>
        createHash('sha256')
          .update(tasks.map((t) => t.id + t.prompt + t.answer + (t.target ?? '')).join('\n'))
          .digest('hex')
          .slice(0, 16);
      expect(
        generateTasks(arithmetic, { digits: 3, operands: 2, operators: '+' }, 12, 7).map((t) => t.prompt),
      ).to.deep.equal([
        '0+729=',
        '51+5=',
        '1+566=',
        '36+36=',
        '8+1=',
        '5+167=',
        '65+969=',
        '844+1=',
        '11+7=',
        '52+732=',
        '3+1=',
        '1+40=',
      ]);
      expect(generateTasks(arithmetic, { digits: 3, minDigits: 1, operands: 2, operators: '+' }, 12, 7)).to.deep.equal(
        generateTasks(arithmetic, { digits: 3, operands: 2, operators: '+' }, 12, 7),
      );
      const add2 = disjointSplit(arithmetic, { digits: 2, operands: 2, operators: '+' }, 20000, 256, 1); // configs/pretrain/base-add2.yaml
      expect(hash([...add2.train, ...add2.test])).to.equal('33b44462e8434b84');
      const sum3w = disjointSplit(
        arithmetic,
        { digits: 2, operands: 3, operators: '+', scratchpad: true },
        50000,
        256,
        4,
      ); // configs/pretrain/base-sum3-working.yaml
      expect(hash([...sum3w.train, ...sum3w.test])).to.equal('9eac9a1415b0beec');
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
      for (const [out, value] of [
        ['0', '0'],
        ['14', '14'],
        ['-7', '-7'],
        ['  14 ', '14'],
        ['\n-120\n', '-120'],
      ]) {
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
      for (const out of ['15', '-14', '014', '2+3*4', '14a', '', '20'])
        expect(arithmetic.verify(task, out), out).to.equal(false);
    });

    it('throws on a task without an answer or from another family', () => {
      expect(() => arithmetic.verify({ id: 'u', family: 'arithmetic', prompt: '1+1=' }, '2')).to.throw(/no answer/);
      expect(() => arithmetic.verify({ ...task, family: 'strings' }, '14')).to.throw(/family 'strings'/);
    });
  });

  describe('validate', () => {
    it('fills missing fields from the defaults', () => {
      expect(arithmetic.validate(undefined)).to.deep.equal({
        digits: 2,
        minDigits: 1,
        operands: 2,
        operators: '+',
        scratchpad: false,
      });
      expect(arithmetic.validate({ operands: 3 })).to.deep.equal({
        digits: 2,
        minDigits: 1,
        operands: 3,
        operators: '+',
        scratchpad: false,
      });
    });

    it('names the offending field', () => {
      const cases: [unknown, RegExp][] = [
        [{ operands: 1 }, /tasks\.difficulty\.operands: expected a number >= 2, received 1/],
        [{ operands: 7 }, /operands/],
        [{ digits: 0 }, /digits/],
        [{ digits: 2.5 }, /digits/],
        [{ digits: '2' }, /digits/],
        [{ operators: '' }, /operators/],
        [{ operators: '/' }, /operators: may only contain.*"\/"/],
        [{ operators: '++' }, /operators: lists "\+" twice/],
        [
          { operand: 3 },
          /tasks\.difficulty\.operand: unrecognized key \(did you mean "operands"\?\); known: digits, minDigits, operands, operators, scratchpad/,
        ],
        [{ minDigits: 0 }, /minDigits: expected a number >= 1, received 0/],
        [{ digits: 3, minDigits: 4 }, /minDigits: must be at most digits \(3\), got 4/],
        [{ minDigits: 1.5 }, /minDigits/],
        [null, /tasks\.difficulty: expected object, received null/],
        [[2, 2], /tasks\.difficulty: expected object, received array/],
      ];
      for (const [d, msg] of cases) expect(() => arithmetic.validate(d), JSON.stringify(d)).to.throw(msg);
    });

    it('protects the shared defaults from callers', () => {
      expect(Object.isFrozen(arithmetic.defaults)).to.equal(true);
    });
  });

  describe('parseProposal', () => {
    const limits = arithmetic.validate({ digits: 3, operands: 2, operators: '+' });
    const propose = (text: string, l = limits) => arithmetic.parseProposal!(text, l);

    it('reads a task in the prompt grammar, answers it with the evaluator, without a target', () => {
      expect(propose('347+58=')).to.deep.equal({
        task: { id: 'proposed', family: 'arithmetic', prompt: '347+58=', answer: '405' },
      });
      expect(propose('0+0=')).to.deep.equal({
        task: { id: 'proposed', family: 'arithmetic', prompt: '0+0=', answer: '0' },
      });
      const wide = arithmetic.validate({ digits: 2, operands: 4, operators: '+-*' });
      expect(propose('12-7*3=', wide)).to.deep.equal({
        task: { id: 'proposed', family: 'arithmetic', prompt: '12-7*3=', answer: '-9' },
      });
      expect('task' in propose('1+2+3+4=', wide) && 'task' in propose('1*2=', wide)).to.equal(true);
      const scratch = arithmetic.validate({ digits: 2, operands: 3, operators: '+', scratchpad: true });
      expect(propose('12+56+34=', scratch)).to.deep.equal({
        task: { id: 'proposed', family: 'arithmetic', prompt: '12+56+34=', answer: '102' },
      });
    });

    it('refuses every kind of bad text with why, and never throws', () => {
      const cases: [string, RegExp][] = [
        ['', /ends in '='/],
        ['347+58', /ends in '='/],
        ['347+58=405', /ends at its one '=', got "=405"/],
        ['347+58==', /ends at its one '='/],
        ['1=2=', /ends at its one '='/],
        ['347+58= ', /ends at its one '='/],
        [' 347+58=', /expected a number at position 0/],
        ['347 +58=', /unexpected " " at position 3/],
        ['=', /expected a number at position 0/],
        ['+5=', /expected a number at position 0/],
        ['3++5=', /expected a number at position 2/],
        ['3+=', /expected a number at position 2/],
        ['-3+5=', /expected a number at position 0/],
        ['347+058=', /leading zero in operand 2 \("058"\)/],
        ['00+1=', /leading zero in operand 1/],
        ['3475+8=', /operand 1 \("3475"\) has 4 digits; at most 3/],
        ['1+2+3=', /3 operands; a task has 2\.\.2/],
        ['7=', /1 operand; a task has 2\.\.2/],
        ['7-3=', /operator "-" is not allowed; allowed: "\+"/],
        ['7*3=', /operator "\*" is not allowed/],
        ['7/3=', /unexpected "\/" at position 1/],
        ['7+3=x', /ends at its one '='/],
        ['x7+3=', /expected a number at position 0/],
        ['new arithmetic:', /ends in '='/],
      ];
      for (const [text, why] of cases) {
        const r = propose(text);
        expect(r, text).to.have.property('error').that.matches(why);
      }
      expect(propose(12 as unknown as string))
        .to.have.property('error')
        .that.matches(/must be a string/);
      expect(propose('5+7=', arithmetic.validate({ digits: 3, minDigits: 2, operands: 2, operators: '+' })))
        .to.have.property('error')
        .that.matches(/operand 1 \("5"\) has 1 digit; at least 2/);
    });

    it('never runs the text as code', () => {
      const r = propose('(globalThis.__coevolveProposed = 1)+1=');
      expect(r).to.have.property('error');
      expect((globalThis as Record<string, unknown>).__coevolveProposed).to.equal(undefined);
    });

    it('throws on bad limits: a caller bug, not model text', () => {
      expect(() => arithmetic.parseProposal!('1+2=', { digits: 9 } as ArithmeticDifficulty)).to.throw(
        /digits: expected a number <= 4, received 9/,
      );
    });
  });

  describe('measure', () => {
    const task = (prompt: string): Task => ({ id: 't', family: 'arithmetic', prompt });

    it('gives operands and the longest, shortest and total digits of a prompt', () => {
      expect(arithmetic.measure!(task('347+58='))).to.deep.equal({
        operands: 2,
        digits: 3,
        minDigits: 2,
        totalDigits: 5,
        carries: 2,
      });
      expect(arithmetic.measure!(task('5+7='))).to.deep.equal({
        operands: 2,
        digits: 1,
        minDigits: 1,
        totalDigits: 2,
        carries: 1,
      });
      // carries are what make a sum hard: none in 23+43, two in 47+85, and a chain in 999+1+0
      expect(
        [task('23+43='), task('47+85='), task('999+1+0='), task('95+5+5=')].map((t) => arithmetic.measure!(t).carries),
      ).to.deep.equal([0, 2, 3, 2]);
      expect(arithmetic.measure!(task('1234*0-56+789='))).to.deep.equal({
        operands: 4,
        digits: 4,
        minDigits: 1,
        totalDigits: 10,
      });
    });

    it('agrees with the difficulty a task was generated at', () => {
      for (const t of generateTasks(arithmetic, { digits: 3, minDigits: 3, operands: 3, operators: '+-' }, 50, 2)) {
        expect(arithmetic.measure!(t), t.prompt).to.deep.include({
          operands: 3,
          digits: 3,
          minDigits: 3,
          totalDigits: 9,
        });
      }
    });

    it('throws on a task it cannot read or of another family', () => {
      expect(() => arithmetic.measure!(task('1+2'))).to.throw(/cannot measure task 't': a task ends in '='/);
      expect(() => arithmetic.measure!({ ...task('1+2='), family: 'strings' })).to.throw(/family 'strings'/);
    });
  });
});
