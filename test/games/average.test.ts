import { expect } from 'chai';
import { AveragePolicy, ownReach } from '../../src/games/average.js';
import { expectedReturns, fromTable, type TabularPolicy } from '../../src/games/exploitability.js';
import { representativeStates } from '../../src/games/tabulate.js';
import { kuhnPoker as kuhn } from '../../src/games/kuhn.js';

// Two pure-ish Kuhn policies for player 0 and one fixed policy for player 1.
function tableWith(p0: (key: string) => number, p1: (key: string) => number): TabularPolicy {
  const t: TabularPolicy = {};
  for (const [key, { player }] of representativeStates(kuhn)) {
    const bet = player === 0 ? p0(key) : p1(key);
    t[key] = { '0': 1 - bet, '1': bet };
  }
  return t;
}

describe('AveragePolicy (fictitious play)', () => {
  it("own reach multiplies only the acting player's own moves", () => {
    const t = tableWith(
      () => 0.25,
      () => 0.5,
    );
    const reach = ownReach(kuhn, t);
    expect(reach.get('0')).to.equal(1); // first decision
    expect(reach.get('0pb')).to.be.closeTo(0.75, 1e-12); // after own pass (opponent's bet not counted)
    expect(reach.get('1p')).to.equal(1); // player 1's first decision
  });

  it("realises the mixture: against any fixed opponent, the average of A and B is worth the mean of A's and B's values", () => {
    const opponent = (key: string) => (key.length % 2 ? 0.3 : 0.8);
    const a = tableWith((k) => (k.startsWith('2') ? 1 : 0.1), opponent);
    const b = tableWith((k) => (k.endsWith('pb') ? 0.9 : 0.4), opponent);
    const avg = new AveragePolicy(kuhn);
    avg.add(a);
    avg.add(b);
    const va = expectedReturns(kuhn, fromTable(a))[0];
    const vb = expectedReturns(kuhn, fromTable(b))[0];
    const vAvg = expectedReturns(kuhn, fromTable(avg.table()))[0];
    expect(va).to.not.be.closeTo(vb, 1e-3); // the two differ, so the check has teeth
    expect(vAvg).to.be.closeTo((va + vb) / 2, 1e-12);
    // a plain (unweighted) average of the rows would not realise it
    const plain: TabularPolicy = Object.fromEntries(
      Object.keys(a).map((k) => [k, { '0': (a[k]['0'] + b[k]['0']) / 2, '1': (a[k]['1'] + b[k]['1']) / 2 }]),
    );
    expect(Math.abs(expectedReturns(kuhn, fromTable(plain))[0] - (va + vb) / 2)).to.be.above(1e-4);
  });

  it('weights count: a weight of 3 on A is the 3:1 mixture', () => {
    const opponent = () => 0.5;
    const a = tableWith(() => 0.9, opponent);
    const b = tableWith(() => 0.1, opponent);
    const avg = new AveragePolicy(kuhn);
    avg.add(a, 3);
    avg.add(b, 1);
    const v = (t: TabularPolicy) => expectedReturns(kuhn, fromTable(t))[0];
    expect(v(avg.table())).to.be.closeTo((3 * v(a) + v(b)) / 4, 1e-12);
    expect(() => avg.add(a, -1)).to.throw(/weight must be >= 0/);
  });
});
