import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { microBatches } from '../../src/models/types.js';
import { aggLoss, type AggMode } from '../../src/rl/loss.js';
import { JointTrainer, type ModelStep, type TrainSample, type TrainerConfig } from '../../src/rl/trainer.js';
import { batch, small } from './fixtures.js';

const MODES: AggMode[] = ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'];
const read = (t: tf.Tensor) => {
  const v = t.dataSync()[0];
  t.dispose();
  return v;
};

interface Outcome {
  step: Omit<ModelStep, 'gradNorm' | 'skipped' | 'reason'>;
  grads: Record<string, Float32Array>;
  after: Record<string, Float32Array>;
}

/** Gradients and statistics of the batch, then the parameters after one step on it. */
function run(aggMode: AggMode, microBatch: number | undefined): Outcome {
  const m = new TinyLM(small);
  // ε well above float noise keeps Adam's first step lr·g/(|g| + ε) continuous in g
  const config: Partial<TrainerConfig> = {
    lr: 1e-2,
    epsilon: 1e-3,
    aggMode,
    entropyCoef: 0.01,
    valueCoef: 0.5,
    maxGradNorm: 0.5,
    ...(microBatch ? { microBatch } : {}),
  };
  const trainer = new JointTrainer({ m }, config);
  const { grads, ...step } = trainer.gradients('m', batch());
  const values = Object.fromEntries(
    Object.entries(grads).map(([k, g]) => [k.replace(/^[^/]*\//, ''), g.dataSync() as Float32Array]),
  ); // drop the model's name prefix
  tf.dispose(Object.values(grads));
  trainer.step(batch());
  const after = Object.fromEntries(Object.entries(m.weights).map(([k, v]) => [k, v.dataSync() as Float32Array]));
  m.dispose();
  trainer.dispose();
  return { step, grads: values, after };
}

function expectClose(a: Record<string, Float32Array>, b: Record<string, Float32Array>, what: string): void {
  expect(Object.keys(a).sort(), what).to.deep.equal(Object.keys(b).sort());
  for (const k of Object.keys(a)) {
    const worst = a[k].reduce((w, x, i) => Math.max(w, Math.abs(x - b[k][i])), 0);
    expect(worst, `${what} ${k}`).to.be.below(1e-5);
  }
}

describe('micro-batching (exact gradient accumulation)', () => {
  before(async () => {
    await initBackend('cpu');
  });

  for (const mode of MODES) {
    it(`${mode}: 7 samples in passes of 3 give the loss, statistics, every gradient and the step of one pass`, () => {
      const [whole, split] = [run(mode, undefined), run(mode, 3)];
      const [a, b] = [whole.step, split.step];
      expect(b.loss, 'loss').to.be.closeTo(a.loss, 1e-5);
      for (const role of ['proposer', 'solver']) expect(b.roleLoss[role], role).to.be.closeTo(a.roleLoss[role], 1e-5);
      for (const key of ['clipfrac', 'ppoKl', 'entropy', 'kl', 'valueLoss'] as const)
        expect(b[key], key).to.be.closeTo(a[key]!, 1e-5);
      expect([b.samples, b.tokens]).to.deep.equal([7, 17]);
      expect(Object.keys(whole.grads)).to.include.members(['tok_emb', 'value.w']);
      expectClose(whole.grads, split.grads, 'gradient');
      expectClose(whole.after, split.after, 'parameter');
    });
  }

  it('passes of 1, 2 and 7 agree too, and a split step frees every tensor it made', () => {
    const whole = run('seq-mean-token-mean', undefined);
    for (const size of [1, 2, 7]) expectClose(whole.grads, run('seq-mean-token-mean', size).grads, `passes of ${size}`);
    const m = new TinyLM(small);
    const trainer = new JointTrainer({ m }, { microBatch: 2, entropyCoef: 0.01, klCoef: 0.1 });
    trainer.step(batch()); // creates Adam's moments
    const before = tf.memory().numTensors;
    trainer.step(batch());
    expect(tf.memory().numTensors).to.equal(before);
    m.dispose();
    trainer.dispose();
  });

  it('cuts a pass where rows that fit the context one by one would not fit it together, with the same gradients', () => {
    const row = (p: number, c: number, i: number): TrainSample => ({
      model: 'm',
      role: 'solver',
      prompt: [1, ...Array(p - 1).fill(3 + (i % 5))],
      completion: Array(c).fill(2 + i),
      oldLogProbs: Array(c).fill(-2.3),
      advantages: i % 2 ? 1 : -1,
    });
    // context 16: a 12-token prompt beside a 6-token completion would take 17 positions
    const rows = [row(12, 2, 0), row(3, 6, 1), row(4, 5, 2), row(12, 1, 3)];
    expect(microBatches(rows, 8, 16).map((p) => p.map((r) => rows.indexOf(r)))).to.deep.equal([[0], [1, 2], [3]]);
    expect(microBatches(rows, 2, Infinity).map((p) => p.length)).to.deep.equal([2, 2]);
    const grads = (microBatch: number) => {
      const m = new TinyLM(small);
      const trainer = new JointTrainer({ m }, { microBatch });
      const { grads: g } = trainer.gradients('m', rows);
      const out = Object.fromEntries(
        Object.entries(g).map(([k, v]) => [k.replace(/^[^/]*\//, ''), v.dataSync() as Float32Array]),
      );
      tf.dispose(Object.values(g));
      m.dispose();
      trainer.dispose();
      return out;
    };
    expectClose(grads(1), grads(256), 'gradient');
  });

  it('rejects a microBatch that is not a positive integer', () => {
    for (const bad of [0, -2, 2.5, Number.NaN])
      expect(() => new JointTrainer({}, { microBatch: bad })).to.throw(/microBatch must be a positive integer/);
  });

  describe('aggLoss global-batch arguments (verl agg_loss)', () => {
    // Rows 0-1 are one micro-batch, rows 2-3 another; row 3 is empty. Masked-in: 1, 2 | 4 | 7, 8, 9 | -.
    const L = [
      [1, 2, 0],
      [4, 0, 0],
      [7, 8, 9],
      [5, 5, 5],
    ];
    const M = [
      [1, 1, 0],
      [1, 0, 0],
      [1, 1, 1],
      [0, 0, 0],
    ];
    const agg = (rows: number[], mode: AggMode, global = {}) =>
      read(aggLoss(tf.tensor2d(rows.map((r) => L[r])), tf.tensor2d(rows.map((r) => M[r])), mode, global));

    it('token-mean: Σ(L·M) / batchNumTokens · dpSize', () => {
      expect(agg([0, 1], 'token-mean', { batchNumTokens: 6 })).to.be.closeTo(7 / 6, 1e-6);
      expect(agg([0, 1], 'token-mean', { batchNumTokens: 6, dpSize: 2 })).to.be.closeTo(14 / 6, 1e-6);
      expect(agg([0, 1], 'token-mean', { dpSize: 2 })).to.be.closeTo((7 / 3) * 2, 1e-6); // local count
    });
    it('seq-mean modes: Σ over non-empty rows / globalBatchSize · dpSize', () => {
      expect(agg([2, 3], 'seq-mean-token-sum', { globalBatchSize: 3 })).to.be.closeTo(24 / 3, 1e-6);
      expect(agg([2, 3], 'seq-mean-token-sum', { globalBatchSize: 3, dpSize: 4 })).to.be.closeTo(32, 1e-5);
      expect(agg([0, 1], 'seq-mean-token-mean', { globalBatchSize: 3 })).to.be.closeTo((1.5 + 4) / 3, 1e-6);
    });
    it('seq-mean-token-sum-norm: Σ / lossScaleFactor, not scaled by dpSize (as verl)', () => {
      expect(agg([0, 1], 'seq-mean-token-sum-norm', { lossScaleFactor: 8 })).to.be.closeTo(7 / 8, 1e-6);
      expect(agg([0, 1], 'seq-mean-token-sum-norm', { lossScaleFactor: 8, dpSize: 2 })).to.be.closeTo(7 / 8, 1e-6);
    });
    it('whole-batch arguments make the halves sum to the whole; local counts would not', () => {
      const global = { batchNumTokens: 6, globalBatchSize: 3, lossScaleFactor: 3 };
      for (const mode of MODES) {
        const whole = agg([0, 1, 2, 3], mode);
        expect(agg([0, 1], mode, global) + agg([2, 3], mode, global), mode).to.be.closeTo(whole, 1e-5);
        // the second half's grid is as wide as the first's here, so sum-norm would be right anyway
        if (mode !== 'seq-mean-token-sum-norm')
          expect(Math.abs(agg([0, 1], mode) + agg([2, 3], mode) - whole), mode).to.be.above(0.5);
      }
    });
    it('rejects non-positive normalisers and a fractional dpSize', () => {
      expect(() => agg([0], 'token-mean', { batchNumTokens: 0 })).to.throw(/batchNumTokens/);
      expect(() => agg([0], 'token-mean', { dpSize: 1.5 })).to.throw(/dpSize/);
    });
  });
});
