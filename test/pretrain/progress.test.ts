import { expect } from 'chai';
import { duration, StepProgress } from '../../src/pretrain/progress.js';

describe('pretrain progress line', () => {
  it('says the step, the loss, steps/s and the time left, at most once per interval', () => {
    const lines: string[] = [];
    const every0 = new StepProgress(10, 2, (l) => lines.push(l), 0);
    every0.step(3, 0.5);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^step 3\/10 loss=0\.5000 [\d.]+ steps\/s, \S+ left$/);
    const quiet: string[] = [];
    const hourly = new StepProgress(10, 0, (l) => quiet.push(l), 3600);
    for (let s = 1; s <= 5; s++) hourly.step(s, 1);
    expect(quiet, 'nothing before the interval has passed').to.deep.equal([]);
  });

  it('writes durations as people read them', () => {
    expect(duration(12.4)).to.equal('12s');
    expect(duration(185)).to.equal('3m05s');
    expect(duration(3720)).to.equal('1h02m');
    expect(duration(Infinity)).to.equal('?');
  });
});
