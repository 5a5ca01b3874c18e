import { expect } from 'chai';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { generateTasks } from '../../src/tasks/jsonl.js';
import { parseScratchpad } from '../../src/tasks/scratchpad.js';

describe('tasks/scratchpad', () => {
  it('gives sums working in a random order whose last result is the answer', () => {
    const plain = generateTasks(arithmetic, { digits: 2, operands: 3 }, 40, 5);
    const tasks = generateTasks(arithmetic, { digits: 2, operands: 3, scratchpad: true }, 40, 5);
    expect(tasks[0].prompt).to.equal(plain[0].prompt); // working is drawn after the prompt
    expect(plain.every((t) => t.target === undefined)).to.equal(true);
    const firstSteps = new Set<string>();
    for (const t of tasks) {
      const steps = t.target!.split(',');
      expect(steps).to.have.length(2);
      for (const s of steps) {
        const [lhs, c] = s.split('=');
        const [a, b] = lhs.split('+').map(Number);
        expect(a + b, s).to.equal(Number(c));
      }
      expect(arithmetic.verify(t, t.target!)).to.equal(true);
      firstSteps.add(
        steps[0].split('=')[0].split('+').sort().join('+') ===
          t.prompt.slice(0, -1).split('+').slice(0, 2).sort().join('+')
          ? 'ab'
          : 'other',
      );
    }
    expect(firstSteps.size).to.equal(2); // not always the first two operands
  });

  it('parses working strictly and answers with the last result', () => {
    expect(parseScratchpad('12+56=68,68+34=102')).to.deep.equal({ valid: true, value: '102' });
    expect(arithmetic.parseAnswer(' 12+56=68,68+34=102 ')).to.deep.equal({ valid: true, value: '102' });
    expect(parseScratchpad('12+56=68,68+34').error).to.match(/step 2/);
    expect(parseScratchpad('12*5=60').valid).to.equal(false);
    expect(parseScratchpad('1+1=02').valid).to.equal(false);
    expect(arithmetic.parseAnswer('1+1=').valid).to.equal(false);
  });

  it('is refused for anything but sums', () => {
    expect(() => arithmetic.validate({ operators: '+-', scratchpad: true })).to.throw(
      /tasks\.difficulty\.scratchpad: needs operators '\+'/,
    );
    expect(() => arithmetic.validate({ scratchpad: 'yes' })).to.throw(
      /tasks\.difficulty\.scratchpad: expected boolean, received string/,
    );
  });
});
