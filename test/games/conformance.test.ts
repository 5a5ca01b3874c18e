import { expect } from 'chai';
import { CHANCE, GAMES, TERMINAL, gameByName, type GameState } from '../../src/games/index.js';
import { Rng } from '../../src/util/rng.js';

// One conformance test for every game (OpenSpiel's random-simulation test): many seeded random
// playthroughs with every invariant of the API checked at every state.
describe('games: conformance', () => {
  for (const [name, game] of Object.entries(GAMES)) {
    it(`${name}: 300 seeded random games keep every invariant`, () => {
      const lengths = new Set<number>();
      for (let seed = 1; seed <= 300; seed++) {
        const rng = new Rng(seed);
        const s = game.newInitialState();
        const seen: GameState[] = [];
        while (!s.isTerminal()) {
          const player = s.currentPlayer();
          const legal = s.legalActions();
          expect(legal.length, `${name}: a live state has moves`).to.be.greaterThan(0);
          expect(player === CHANCE || (player >= 0 && player < game.numPlayers)).to.equal(true);
          if (player === CHANCE) {
            const outcomes = s.chanceOutcomes();
            expect(outcomes.map(([a]) => a)).to.deep.equal(legal);
            expect(outcomes.reduce((t, [, p]) => t + p, 0)).to.be.closeTo(1, 1e-12);
          } else {
            expect(legal.every((a) => Number.isInteger(a) && a >= 0 && a < game.numActions)).to.equal(true);
            expect(s.observationVector(player)).to.have.length(game.observationSize);
            expect(s.observationText(player)).to.be.a('string').and.not.equal('');
            expect(s.informationStateKey(player)).to.be.a('string');
          }
          // an illegal move throws, names the legal ones, and changes nothing
          const illegalMove = [-1, 99, ...Array.from({ length: 12 }, (_, i) => i)].find((a) => !legal.includes(a))!;
          const before = s.history().join(',');
          expect(() => s.apply(illegalMove)).to.throw(/not legal here; legal:/);
          expect(s.history().join(',')).to.equal(before);
          // a clone is independent: moving it leaves the original alone
          const copy = s.clone();
          copy.apply(legal[0]);
          expect(s.history().join(',')).to.equal(before);
          expect(copy.history()).to.have.length(s.history().length + 1);
          seen.push(s.clone());
          s.apply(legal[rng.int(legal.length)]);
        }
        expect(s.currentPlayer()).to.equal(TERMINAL);
        expect(s.legalActions()).to.deep.equal([]);
        const r = s.returns();
        expect(r).to.have.length(game.numPlayers);
        if (game.zeroSum) expect(r.reduce((a, b) => a + b, 0)).to.be.closeTo(0, 1e-12);
        for (const earlier of seen)
          expect(
            earlier.returns().every((x) => x === 0),
            'returns are zero before the end',
          ).to.equal(true);
        lengths.add(s.history().length);
      }
      expect(lengths.size, `${name}: random play reaches games of several lengths`).to.be.greaterThan(
        name === 'rps' ? 0 : 1,
      );
    });
  }

  it('an information-state key hides exactly what the player cannot see', () => {
    const play = (name: string, moves: number[]) => {
      const s = gameByName(name).newInitialState();
      for (const m of moves) s.apply(m);
      return s;
    };
    // Kuhn: the opponent's card is hidden, the own card and the moves are not (OpenSpiel's keys)
    expect(play('kuhn', [0, 1]).informationStateKey(0)).to.equal('0');
    expect(play('kuhn', [0, 2, 0, 1]).informationStateKey(0)).to.equal('0pb');
    expect(play('kuhn', [0, 2, 0]).informationStateKey(1)).to.equal(play('kuhn', [1, 2, 0]).informationStateKey(1));
    expect(play('kuhn', [0, 2, 0]).informationStateKey(1)).to.equal('2p');
    // Leduc: own card and the public card are seen, the opponent's is not
    expect(play('leduc', [0, 3, 1, 1, 5]).informationStateKey(0)).to.equal(
      play('leduc', [0, 2, 1, 1, 5]).informationStateKey(0),
    );
    expect(play('leduc', [0, 3, 2, 1, 5]).informationStateKey(1)).to.equal('3:5|rc|');
    // rock-paper-scissors: player 1 moves without seeing player 0's move
    expect(play('rps', [0]).informationStateKey(1)).to.equal(play('rps', [2]).informationStateKey(1));
    // tic-tac-toe has perfect information
    expect(play('tictactoe', [4, 0]).informationStateKey(0)).to.equal('o...x....x');
  });

  it('scores showdowns, folds and draws as the rules say', () => {
    const play = (name: string, moves: number[]) => {
      const s = gameByName(name).newInitialState();
      for (const m of moves) s.apply(m);
      return s.returns();
    };
    expect(play('kuhn', [2, 0, 0, 0])).to.deep.equal([1, -1]); // pass pass: K beats J
    expect(play('kuhn', [0, 2, 1, 1])).to.deep.equal([-2, 2]); // bet call: K wins 2
    expect(play('kuhn', [0, 2, 0, 1, 0])).to.deep.equal([-1, 1]); // pass bet fold
    expect(play('leduc', [0, 2, 2, 0])).to.deep.equal([1, -1]); // raise, fold: the folder loses its ante of 1
    expect(play('leduc', [0, 2, 1, 1, 1, 1, 1])).to.deep.equal([1, -1]); // checks all round; J' on the board pairs player 0's jack
    expect(play('leduc', [4, 0, 1, 1, 5, 2, 1])).to.deep.equal([5, -5]); // pair of kings after a raise of 4 is called
    expect(play('leduc', [0, 1, 1, 1, 4, 1, 1])).to.deep.equal([0, 0]); // two jacks, king on board: split
    expect(play('rps', [0, 2])).to.deep.equal([1, -1]); // rock beats scissors
    expect(play('tictactoe', [0, 3, 1, 4, 2])).to.deep.equal([1, -1]); // x takes the top row
  });
});
