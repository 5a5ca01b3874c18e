import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { policyLoss } from '../../src/rl/loss.js';
import { rolloutIsWeights } from '../../src/rl/rollout-is.js';
import { correctStale } from '../../src/rl/stale.js';
import type { TrainSample } from '../../src/rl/trainer.js';
import type { Turn } from '../../src/core/types.js';
import type { BatchingServer } from '../../src/serving/server.js';

describe('truncated rollout importance sampling (verl rollout_is, token level, truncate)', () => {
  before(async () => {
    await tf.setBackend('cpu');
  });

  it('is exp(old - rollout) per token, capped above at the threshold only, with the log-ratio bounded at ±20', () => {
    const w = rolloutIsWeights([-0.5, -1.0, -2.0, -3.0], [-1.0, -0.2, -2.0, -0.1], 1.5);
    // hand-computed: e^0.5 = 1.6487 -> capped at 1.5; e^-0.8 = 0.44933; e^0 = 1; e^-2.9 = 0.055023 (no lower bound)
    expect(w[0]).to.equal(1.5);
    expect(w[1]).to.be.closeTo(0.449329, 1e-6);
    expect(w[2]).to.equal(1);
    expect(w[3]).to.be.closeTo(0.0550232, 1e-6);
    const far = rolloutIsWeights([0, -50], [-30, 0], 1e12);
    expect(far[0]).to.be.closeTo(Math.exp(20), 1); // 30 clamped to 20
    expect(far[1]).to.be.closeTo(Math.exp(-20), 1e-12);
    expect(() => rolloutIsWeights([0], [0, 0], 2)).to.throw(/1 old log-probs for 2 rollout/);
    expect(() => rolloutIsWeights([0], [0], 0)).to.throw(/threshold must be a positive number/);
  });

  it('multiplies each token of the clipped PPO loss before aggregation (compute_policy_loss_vanilla)', () => {
    const t = (x: number[]) => tf.tensor2d([x]);
    const base = {
      oldLogProb: t([0, 0]),
      logProb: t([0.1, -0.1]),
      advantages: t([1, 1]),
      mask: t([1, 1]),
      clipLow: 0.2,
    };
    // A > 0 and both ratios inside [0.8, 1.2]: per-token loss is -ρ = [-e^0.1, -e^-0.1]
    const plain = policyLoss(base).loss.dataSync()[0];
    expect(plain).to.be.closeTo(-(Math.exp(0.1) + Math.exp(-0.1)) / 2, 1e-6);
    const weighted = policyLoss({ ...base, rolloutIsWeights: t([2, 0.5]) }).loss.dataSync()[0];
    expect(weighted).to.be.closeTo(-(2 * Math.exp(0.1) + 0.5 * Math.exp(-0.1)) / 2, 1e-6);
    // the gradient of each token scales with its weight
    const grad = (w?: tf.Tensor2D) =>
      tf
        .grad((lp: tf.Tensor) => policyLoss({ ...base, logProb: lp as tf.Tensor2D, rolloutIsWeights: w }).loss)(
          base.logProb,
        )
        .arraySync() as number[][];
    const g0 = grad()[0];
    const g1 = grad(t([2, 0.5]))[0];
    expect(g1[0]).to.be.closeTo(2 * g0[0], 1e-6);
    expect(g1[1]).to.be.closeTo(0.5 * g0[1], 1e-6);
  });

  it("corrects every sample played elsewhere (an inference server), an unknown rollout log-prob taking the learner's", async () => {
    const learner = [-1, -2, -0.5];
    const server = { logProbs: async () => learner } as unknown as BatchingServer;
    const sample = (): TrainSample => ({
      model: 'm',
      role: 'solver',
      prompt: [1],
      completion: [2, 3, 4],
      oldLogProbs: [-1.5, NaN, -0.5],
      advantages: 1,
    });
    const turn = () => ({ staleness: 0 }) as unknown as Turn;
    const here = [sample()];
    expect(await correctStale(here, [{ turn: turn() }], { m: server }, 1, 2)).to.deep.equal({}); // fresh, and played here
    expect(here[0].isWeights).to.equal(undefined);
    const there = [sample()];
    const t = turn();
    const m = await correctStale(there, [{ turn: t }], { m: server }, 1, 2, true);
    expect(there[0].oldLogProbs).to.deep.equal(learner);
    expect(there[0].isWeights![0]).to.be.closeTo(Math.exp(0.5), 1e-12);
    expect(there[0].isWeights!.slice(1)).to.deep.equal([1, 1]); // NaN: the learner's own log-prob, weight 1
    expect(t.isWeights).to.deep.equal(there[0].isWeights);
    expect(m['rollout_is/tokens']).to.equal(3);
    expect(m['rollout_is/logprob_gap']).to.be.closeTo(0.5 / 3, 1e-12);
  });
});
