import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { GameLearner, type PlayedMove } from '../../src/games/learner.js';
import { Magnet } from '../../src/games/magnet.js';
import { kuhnPoker } from '../../src/games/kuhn.js';
import { representativeStates, tabulateMlp } from '../../src/games/tabulate.js';
import { MlpPolicy } from '../../src/models/mlp.js';
import { StateBaseline } from '../../src/rl/state-baseline.js';

const game = kuhnPoker;
const mlp = (seed = 1) =>
  new MlpPolicy({ inputSize: game.observationSize, hiddenSizes: [16], numActions: game.numActions, seed });

/** One move at every Kuhn information state, each with reward r(key). */
function everyState(r: (key: string, action: number) => number): PlayedMove[] {
  return [...representativeStates(game)].flatMap(([key, { state, player }]) =>
    state.legalActions().map((action) => ({
      role: `seat${player}`,
      state: key,
      features: state.observationVector(player),
      legal: Array.from({ length: game.numActions }, (_, a) => state.legalActions().includes(a)),
      action,
      reward: r(key, action),
    })),
  );
}

describe('games: the state baseline, the magnet and the game learner', () => {
  it("the 'infostate' baseline: each reward minus its state's value before the batch, then the batch mean folded in", () => {
    const b = new StateBaseline(0.5);
    expect(b.advantages(['a', 'a', 'b'], [1, 3, -2])).to.deep.equal([1, 3, -2]); // nothing seen yet: 0
    expect(b.baseline('a')).to.equal(1); // 0.5 * 0 + 0.5 * mean(1, 3)
    expect(b.baseline('b')).to.equal(-1);
    expect(b.advantages(['a', 'b', 'c'], [2, 0, 5])).to.deep.equal([1, 1, 5]);
    expect(new StateBaseline(0.5, b.toJSON()).baseline('a')).to.equal(1.5);
    expect(() => new StateBaseline(1)).to.throw(/decay must be in \[0, 1\)/);
  });

  it('a uniform magnet is uniform over the legal moves; a moving one takes its rate of the policy each step', () => {
    const legal = [true, false, true];
    expect(new Magnet(undefined).logProb('k', 0, legal)).to.be.closeTo(Math.log(1 / 2), 1e-12);
    const m = new Magnet(0.25);
    m.follow({ k: { '0': 1, '2': 0 } });
    expect(Math.exp(m.logProb('k', 0, legal))).to.be.closeTo(0.75 * 0.5 + 0.25, 1e-12);
    m.follow({ k: { '0': 1, '2': 0 } });
    expect(Math.exp(m.logProb('k', 0, legal))).to.be.closeTo(0.75 * 0.625 + 0.25, 1e-12);
    expect(Math.exp(new Magnet(0.25, m.state()).logProb('k', 2, legal))).to.be.closeTo(1 - 0.71875, 1e-12);
    expect(() => m.follow({ other: { '0': 1 } })).to.throw(/state 'other'/);
  });

  it('all-actions: one sample per legal move of every visited state, advantages summing to zero at each', () => {
    const model = mlp();
    const learner = new GameLearner(game, model, {
      gradient: 'all-actions',
      alpha: 0.1,
      critic: { kind: 'sampled', decay: 0.9 },
      mmd: { eta: 0.1, fitSteps: 10, fitTol: 0 },
    });
    const { samples, metrics } = learner.update(
      everyState((_, a) => (a === 1 ? 1 : -1)),
      tf.train.adam(0.01),
    );
    expect(metrics['game/states_updated']).to.equal(12);
    expect(samples).to.have.length(24); // Kuhn: two legal moves at each of 12 states
    for (let i = 0; i < samples.length; i += 2) {
      const [x, y] = [samples[i], samples[i + 1]];
      expect((x.advantages as number) + (y.advantages as number)).to.be.closeTo(0, 1e-12);
      expect(x.completion[0]).to.not.equal(y.completion[0]);
    }
    // move 1 earns more everywhere: its advantage is positive at every state
    for (const s of samples) expect(Math.sign(s.advantages as number)).to.equal(s.completion[0] === 1 ? 1 : -1);
    model.dispose();
  });

  it("distill: the network is fitted to MMD's step until it holds it, moving toward the better move", () => {
    const model = mlp(2);
    const before = tabulateMlp(game, model);
    const learner = new GameLearner(game, model, {
      gradient: 'distill',
      alpha: 0.1,
      critic: { kind: 'counts', decay: 0.8 },
      mmd: { eta: 0.5, fitSteps: 300, fitTol: 1e-4 },
    });
    const { samples, metrics } = learner.update(
      everyState((_, a) => (a === 1 ? 1 : -1)),
      tf.train.adam(0.01),
    );
    expect(samples).to.have.length(0);
    expect(metrics['game/fit_kl']).to.be.below(1e-4);
    expect(metrics['game/fit_steps']).to.be.within(1, 299);
    const after = tabulateMlp(game, model);
    for (const key of Object.keys(before)) expect(after[key]['1']).to.be.above(before[key]['1']);
    model.dispose();
  });

  it('a moving magnet follows the model after each update; its state comes back from a checkpoint', () => {
    const model = mlp(3);
    const o = {
      gradient: 'sampled' as const,
      alpha: 0.1,
      magnetRate: 0.5,
      critic: { kind: 'sampled' as const, decay: 0.9 },
      mmd: { eta: 0.1, fitSteps: 1, fitTol: 0 },
    };
    const learner = new GameLearner(game, model, o);
    learner.afterUpdate();
    const table = tabulateMlp(game, model);
    const [key, row] = Object.entries(table)[0];
    const legal = [true, true];
    expect(Math.exp(learner.magnet.logProb(key, 0, legal))).to.be.closeTo(0.5 * 0.5 + 0.5 * row['0'], 1e-9);
    const again = new GameLearner(game, model, o, JSON.parse(JSON.stringify(learner.state())));
    expect(again.magnet.logProb(key, 0, legal)).to.equal(learner.magnet.logProb(key, 0, legal));
    model.dispose();
  });
});
