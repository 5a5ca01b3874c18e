import { expect } from 'chai';
import { lrMultiplier, type LrSchedule } from '../../src/rl/schedule.js';

const at = (s: Partial<LrSchedule>, total: number) => (step: number) =>
  lrMultiplier({ kind: 'constant', warmup: 0, minRatio: 0, ...s }, step, total);

describe('lr schedules', () => {
  it('constant is 1 from the first update without warmup', () => {
    const f = at({}, 10);
    expect([0, 1, 5, 9, 10].map(f)).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it('warmup rises linearly from 0, then holds (constant) or starts the cosine', () => {
    const f = at({ warmup: 4 }, 20);
    expect([0, 1, 2, 3, 4, 19].map(f)).to.deep.equal([0, 0.25, 0.5, 0.75, 1, 1]);
    const g = at({ kind: 'cosine', warmup: 4 }, 20);
    expect([0, 2, 4].map(g)).to.deep.equal([0, 0.5, 1]);
  });

  it('cosine falls from 1 to minRatio over the updates after warmup, through the midpoint halfway', () => {
    const f = at({ kind: 'cosine', minRatio: 0.1 }, 100);
    expect(f(0)).to.equal(1);
    expect(f(50)).to.be.closeTo(0.55, 1e-12);
    expect(f(100)).to.be.closeTo(0.1, 1e-12);
    expect(f(25)).to.be.closeTo(0.1 + (0.9 * (1 + Math.cos(Math.PI / 4))) / 2, 1e-12);
    const xs = Array.from({ length: 101 }, (_, i) => f(i));
    xs.slice(1).forEach((x, i) => expect(x).to.be.at.most(xs[i]));
  });

  it('a cycle restarts the schedule (warmup and decay) at every multiple of its length', () => {
    const cycled = at({ kind: 'cosine', warmup: 2, minRatio: 0.1, cycle: 10 }, 30);
    const once = at({ kind: 'cosine', warmup: 2, minRatio: 0.1 }, 10);
    for (let step = 0; step < 30; step++) expect(cycled(step)).to.equal(once(step % 10));
    expect(cycled(9)).to.be.lessThan(0.2);
    expect(cycled(12)).to.equal(1);
    expect(() => at({ cycle: 0 }, 10)(1)).to.throw(/cycle/);
    expect(() => cycled(31)).to.throw(/past/);
  });

  it("cycleDecay lowers each restart's peak but keeps the floor", () => {
    const f = at({ kind: 'cosine', minRatio: 0.1, cycle: 10, cycleDecay: 0.5 }, 30);
    expect([0, 10, 20].map(f)).to.deep.equal([1, 0.5, 0.25]);
    expect(f(15)).to.be.closeTo(0.1 + (0.5 - 0.1) / 2, 1e-12);
    expect(f(29)).to.be.closeTo(0.1 + ((0.25 - 0.1) * (1 + Math.cos((Math.PI * 9) / 10))) / 2, 1e-12);
    expect(at({ cycle: 10, cycleDecay: 0.5, warmup: 2 }, 30)(11)).to.equal(0.25);
    expect(() => at({ cycle: 10, cycleDecay: 0 }, 30)(1)).to.throw(/cycleDecay/);
  });

  it('rejects a negative or fractional step, a bad floor or warmup', () => {
    expect(() => at({}, 10)(-1)).to.throw(/step/);
    expect(() => at({}, 10)(1.5)).to.throw(/step/);
    expect(() => at({ kind: 'cosine' }, 10)(11)).to.throw(/step 11 is past the last update 10/);
    expect(() => at({ minRatio: 2 }, 10)(0)).to.throw(/minRatio/);
    expect(() => at({ warmup: -1 }, 10)(0)).to.throw(/warmup/);
  });
});
