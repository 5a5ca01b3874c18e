import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { gameByName } from '../../src/games/index.js';
import { fromTable, nashConv } from '../../src/games/exploitability.js';
import { representativeStates, tabulateMlp } from '../../src/games/tabulate.js';
import { MlpPolicy } from '../../src/models/mlp.js';

describe('games: a policy as a table', () => {
  before(async () => {
    await tf.setBackend('cpu');
  });

  it('visits every information state once, and no key is shared by two players', () => {
    expect(representativeStates(gameByName('kuhn')).size).to.equal(12);
    expect(representativeStates(gameByName('leduc')).size).to.equal(936);
  });

  it("an MLP whose policy head is zero is uniform over the legal moves: Kuhn's NashConv 11/12, Leduc's 4.747222", () => {
    for (const [name, expected] of [
      ['kuhn', 11 / 12],
      ['leduc', 4.747222],
    ] as const) {
      const g = gameByName(name);
      const zeros = { 'pi.w': tf.zeros([16, g.numActions]), 'pi.b': tf.zeros([g.numActions]) };
      const mlp = new MlpPolicy(
        { inputSize: g.observationSize, hiddenSizes: [16], numActions: g.numActions, seed: 1 },
        zeros,
      );
      const table = tabulateMlp(g, mlp);
      expect(Object.keys(table)).to.have.length(name === 'kuhn' ? 12 : 936);
      // Leduc's fold is illegal when not facing a bet: such a row has two moves, not three
      expect(Object.keys(table[name === 'kuhn' ? '0' : '0||'])).to.have.length(2);
      expect(nashConv(g, fromTable(table))).to.be.closeTo(expected, 1e-6);
      tf.dispose(Object.values(zeros));
      mlp.dispose();
    }
  });

  it('a random MLP gives a proper distribution at every state, and a shape mismatch is an error naming both sizes', () => {
    const g = gameByName('kuhn');
    const mlp = new MlpPolicy({ inputSize: g.observationSize, hiddenSizes: [8], numActions: g.numActions, seed: 3 });
    const table = tabulateMlp(g, mlp);
    for (const row of Object.values(table))
      expect(Object.values(row).reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-9);
    expect(new Set(Object.values(table).map((r) => r['1'].toFixed(6))).size).to.be.greaterThan(1); // the observation matters
    mlp.dispose();
    const wrong = new MlpPolicy({ inputSize: 5, hiddenSizes: [], numActions: 2, seed: 1 });
    expect(() => tabulateMlp(g, wrong)).to.throw(/reads 5 features, kuhn observations have 9/);
    wrong.dispose();
  });
});
