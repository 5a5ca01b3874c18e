import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countdown, countdownError, parseExpression } from '../../src/tasks/countdown.js';
import { readTaskFile } from '../../src/tasks/dataset.js';
import { Rng } from '../../src/util/rng.js';

const task = (nums: number[], target: number) => ({
  id: 't',
  family: 'countdown',
  prompt: 'p',
  answer: String(target),
  fields: { nums, target },
});

describe('tasks/countdown', () => {
  it('parses + - * / and parentheses with precedence, exactly, and lists the numbers used', () => {
    expect(parseExpression('2 + 3 * 4')).to.deep.equal({ value: [14n, 1n], numbers: [2, 3, 4] });
    expect(parseExpression('(2 + 3) * 4')).to.deep.equal({ value: [20n, 1n], numbers: [2, 3, 4] });
    expect(parseExpression('7 - 4 - 2')).to.deep.equal({ value: [1n, 1n], numbers: [7, 4, 2] }); // left to right
    expect(parseExpression('8 / 4 / 2')).to.deep.equal({ value: [1n, 1n], numbers: [8, 4, 2] });
    expect(parseExpression('1 / 3 * 3')).to.deep.equal({ value: [1n, 1n], numbers: [1, 3, 3] }); // exact, no 0.999..
    expect(parseExpression('-(3 - 5)')).to.deep.equal({ value: [2n, 1n], numbers: [3, 5] });
  });

  it('refuses anything but that grammar, with where', () => {
    for (const [expr, msg] of [
      ['2 ** 3', /unexpected "\*"/],
      ['2 + ', /unexpected end/],
      ['(2 + 3', /expected '\)'/],
      ['4 / (2 - 2)', /division by zero/],
      ['Math.max(1, 2)', /unexpected "M"/],
      ['2.5 * 2', /unexpected "\."/],
      ['3 = 3', /unexpected "="/],
    ] as const)
      expect(parseExpression(expr), expr).to.have.property('error').that.matches(msg);
  });

  it("judges by TinyZero's rules: the last <answer>, every number exactly once, the target's value", () => {
    const t = task([3, 5, 7], 22);
    expect(countdownError(t, '<think>try</think><answer>3 * 5 + 7</answer>')).to.equal(undefined);
    expect(countdownError(t, '<answer>1</answer> then <answer>7 + 5 * 3</answer>')).to.equal(undefined);
    expect(countdownError(t, '3 * 5 + 7')).to.equal(undefined); // no tags: the whole completion
    expect(countdownError(t, '<answer>3 * 7 + 1</answer>')).to.match(/not each of \[3,5,7\] exactly once/);
    expect(countdownError(t, '<answer>3 * 5 + 7 + 3</answer>')).to.match(/exactly once/);
    expect(countdownError(t, '<answer>3 * 7 + 5</answer>')).to.match(/equals 26, not the target/);
    expect(countdownError(task([1, 2], 1), '<answer>1 / 2</answer>')).to.match(/equals 1\/2/);
    expect(countdown.verify(t, '<answer>(7 + 5) * 3</answer>')).to.equal(false);
    expect(() => countdown.verify({ ...t, fields: undefined }, '1')).to.throw(/needs fields.nums/);
  });

  it('takes the target from the answer when the fields lack it (a dataset whose answer column is the target)', () => {
    expect(
      countdown.verify(
        { id: 'x', family: 'countdown', prompt: '', answer: '22', fields: { nums: [3, 5, 7] } },
        '3*5+7',
      ),
    ).to.equal(true);
  });

  it('generates solvable tasks: its answer uses every number once and reaches the target in range', () => {
    const rng = new Rng(11);
    const d = countdown.validate({ numbers: 4, maxNumber: 30, maxTarget: 50 });
    for (let i = 0; i < 40; i++) {
      const t = countdown.generate(rng, d, i);
      const { nums, target } = t.fields as { nums: number[]; target: number };
      expect(nums).to.have.length(4);
      expect(target).to.be.within(1, 50);
      expect(t.prompt).to.contain(`make ${target}`);
      expect(countdown.verify(t, `<think>.</think><answer>${t.answer}</answer>`), t.answer).to.equal(true);
    }
    expect(() => countdown.validate({ numbers: 9 })).to.throw(/tasks.difficulty: numbers/);
  });

  it("reads TinyZero's rows (target, nums, no prompt column) through a prompt template", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'coevolve-countdown-'));
    try {
      const path = join(dir, 'cd.jsonl');
      writeFileSync(path, JSON.stringify({ target: 22, nums: [3, 5, 7] }) + '\n');
      const [t] = await readTaskFile(path, 'countdown', {
        fields: { prompt: { template: 'Using {nums}, make {target}. {{tags}}' }, answer: 'target' },
      });
      expect(t.prompt).to.equal('Using 3, 5, 7, make 22. {tags}');
      expect(t.fields).to.deep.equal({ nums: [3, 5, 7] });
      expect(countdown.verify(t, '<answer>7 + 3 * 5</answer>')).to.equal(true);
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, JSON.stringify({ target: 22 }) + '\n');
      const error = await readTaskFile(bad, 'countdown', {
        fields: { prompt: { template: '{nums}' }, answer: 'target' },
      }).catch((e: Error) => e.message);
      expect(error).to.equal(
        `${bad}:1: field 'nums': the prompt template needs a string, a number or a list of them, got undefined`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
