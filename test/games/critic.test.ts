import { expect } from 'chai';
import { MoveCritic } from '../../src/games/critic.js';

describe('games/MoveCritic (a tabular critic of moves)', () => {
  it('sampled: the first mean sets a move, later means move it by 1 - decay; unseen moves stay null', () => {
    const c = new MoveCritic('sampled', 3, 0.9);
    let q = c.update([
      { key: 's', action: 0, value: 1 },
      { key: 's', action: 0, value: 3 },
    ]);
    expect(q.get('s')).to.deep.equal([2, null, null]);
    q = c.update([
      { key: 's', action: 0, value: 12 },
      { key: 's', action: 2, value: -1 },
    ]);
    expect(q.get('s')![0]).to.be.closeTo(0.9 * 2 + 0.1 * 12, 1e-12);
    expect(q.get('s')![2]).to.equal(-1);
  });

  it('counts: every return weighs alike within the forgetting, so one early sample does not decide', () => {
    const c = new MoveCritic('counts', 2, 0.5);
    c.update([{ key: 's', action: 1, value: 10 }]);
    const q = c.update([
      { key: 's', action: 1, value: 0 },
      { key: 's', action: 1, value: 0 },
      { key: 's', action: 1, value: 0 },
    ]);
    // (0.5 x 10 + 0) / (0.5 x 1 + 3)
    expect(q.get('s')![1]).to.be.closeTo(5 / 3.5, 1e-12);
    expect(q.get('s')![0]).to.equal(null);
  });

  it('answers only for the states visited, in first-visit order; state() restores it exactly', () => {
    const c = new MoveCritic('counts', 2, 0.8);
    c.update([{ key: 'a', action: 0, value: 1 }]);
    const q = c.update([
      { key: 'b', action: 1, value: 2 },
      { key: 'c', action: 0, value: -1 },
      { key: 'b', action: 0, value: 4 },
    ]);
    expect([...q.keys()]).to.deep.equal(['b', 'c']);
    const copy = new MoveCritic('counts', 2, 0.8, JSON.parse(JSON.stringify(c.state())));
    const next = [{ key: 'a', action: 0, value: 3 }];
    expect(copy.update(next)).to.deep.equal(c.update(next));
  });

  it('refuses a bad kind, decay or move', () => {
    expect(() => new MoveCritic('best' as 'counts', 2, 0.5)).to.throw(/sampled, counts/);
    expect(() => new MoveCritic('counts', 2, 1)).to.throw(/decay/);
    expect(() => new MoveCritic('counts', 2, 0.5).update([{ key: 's', action: 2, value: 0 }])).to.throw(/outside 0..1/);
  });
});
