import { expect } from 'chai';
import { gameByName } from '../../src/games/index.js';
import { playLockstep, randomActor, roundRobin, scoreOf, tableActor, type Actor } from '../../src/games/match.js';
import { expectedReturns, fromTable, type TabularPolicy } from '../../src/games/exploitability.js';
import { tabulate } from '../../src/games/tabulate.js';

/** Always the lowest legal move, and counts its calls. */
function lowest(): Actor & { calls: number } {
  const a = {
    calls: 0,
    act(features: number[][], o: { legal: boolean[][]; seed: number }) {
      a.calls++;
      return { actions: o.legal.map((row) => row.indexOf(true)), logProbs: o.legal.map(() => 0) };
    },
  };
  return a;
}

describe('games/match: lockstep play, round robins', () => {
  const ttt = gameByName('tictactoe');

  it('each actor plays only its seats, once per decision step, legal moves only', () => {
    const [x, o] = [lowest(), lowest()];
    const seeds = { next: 10 };
    const { states, moves } = playLockstep(ttt, 6, (ep, seat) => (seat === ep % 2 ? 'x' : 'o'), { x, o }, seeds);
    expect(states.every((s) => s.isTerminal())).to.equal(true);
    for (const m of moves) expect(m.actor).to.equal(m.seat === m.ep % 2 ? 'x' : 'o');
    // lowest-first play: the first mover takes 0, 2, 4, 6 and wins on the diagonal 2-4-6 at move 7;
    // x moves first in even episodes only
    expect(states.map((s) => scoreOf(s, 0))).to.deep.equal([1, 1, 1, 1, 1, 1]);
    expect(states.map((s, ep) => scoreOf(s, ep % 2))).to.deep.equal([1, 0, 1, 0, 1, 0]);
    // each of the 7 steps has rows for both (x moves first in even episodes, o in odd ones)
    expect([x.calls, o.calls]).to.deep.equal([7, 7]);
    expect(seeds.next).to.equal(10 + 1 + 14); // one for the deals, one per actor call
  });

  it('names an actor it does not have', () => {
    expect(() => playLockstep(ttt, 1, () => 'ghost', { x: lowest() }, { next: 0 })).to.throw(
      /played by 'ghost', not one of x/,
    );
  });

  it('random play keeps to legal moves; a round robin seats each player first in half its games', () => {
    const kuhn = gameByName('kuhn');
    const { moves } = playLockstep(kuhn, 50, () => 'r', { r: randomActor }, { next: 3 });
    for (const m of moves) expect(m.legal[m.action]).to.equal(true);
    const results = roundRobin(ttt, { a: lowest(), b: lowest(), c: randomActor }, 4, { next: 1 });
    expect(results).to.have.length(3 * 4);
    // two lowest-first players: whoever moves first wins, so each takes half
    const ab = results.filter((r) => r.a === 'a' && r.b === 'b').map((r) => r.scoreA);
    expect(ab).to.deep.equal([1, 0, 1, 0]);
  });

  it('a table actor plays its table: each information state by its own row, and no row is an error', () => {
    const kuhn = gameByName('kuhn');
    // always bet with the king, otherwise pass or call one time in four
    const table: TabularPolicy = tabulate(kuhn, (rows) =>
      rows.map((r) => (r.state.informationStateKey(r.player).startsWith('2') ? [0, 1] : [0.75, 0.25])),
    );
    const { states, moves } = playLockstep(kuhn, 4000, () => 't', { t: tableActor(table) }, { next: 5 });
    const king = moves.filter((m) => m.key.startsWith('2'));
    expect(king.every((m) => m.action === 1)).to.equal(true);
    const rest = moves.filter((m) => !m.key.startsWith('2'));
    expect(rest.filter((m) => m.action === 1).length / rest.length).to.be.closeTo(0.25, 0.02);
    for (const m of moves) expect(m.logProb).to.be.closeTo(Math.log(table[m.key][String(m.action)]), 1e-12);
    // the sampled games' mean return approaches the table's exact value
    const mean = states.reduce((t, s) => t + s.returns()[0], 0) / states.length;
    expect(mean).to.be.closeTo(expectedReturns(kuhn, fromTable(table))[0], 0.06);
    expect(() => playLockstep(kuhn, 1, () => 't', { t: tableActor({}) }, { next: 1 })).to.throw(
      /no row for information state/,
    );
  });
});
