import { expect } from 'chai';
import { gameByName } from '../../src/games/index.js';
import { playLockstep, randomActor, roundRobin, scoreOf, type Actor } from '../../src/games/match.js';

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
    expect(() => playLockstep(ttt, 1, () => 'ghost', { x: lowest() }, { next: 0 })).to.throw(/played by 'ghost', not one of x/);
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
});
