import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/backend/index.js';
import { HostMatrix } from '../../src/backend/native/host.js';
import { headScores } from '../../src/models/hf/head.js';
import { TEST_BACKEND } from '../needs.js';
import { maxDiff } from './hf-fixtures.js';

// The chunked head must give what the whole-logits formula gives under tfjs's own autodiff:
// values, and the gradients of both outputs (the entropy's too) for the rows and the head.
describe('the chunked vocabulary head', () => {
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  for (const tied of [false, true])
    for (const keep of [true, false]) {
      const head = tied ? 'tied (the embedding table)' : 'an untied head';
      const softmax = keep ? 'its log-softmax kept' : 'recomputed in the backward pass';
      it(`equals whole logits, values and gradients, ${head}, at temperature 0.7, in chunks of 3 rows, ${softmax}`, () => {
        const keepBytes = keep ? undefined : 0;
        const N = 10,
          d = 6,
          V = 11;
        const h = tf.randomNormal([N, d], 0, 1, 'float32', 1) as tf.Tensor2D;
        const w = tf.randomNormal(tied ? [V, d] : [d, V], 0, 1, 'float32', 2) as tf.Tensor2D;
        const targets = Int32Array.from({ length: N }, (_, i) => (i * 7) % V);
        const a = tf.randomNormal([N], 0, 1, 'float32', 3),
          b = tf.randomNormal([N], 0, 1, 'float32', 4);
        const objective = (s: { logProbs: tf.Tensor; entropy: tf.Tensor }) =>
          s.logProbs.mul(a).add(s.entropy.mul(b)).sum() as tf.Scalar;
        const whole = (hh: tf.Tensor2D, ww: tf.Tensor2D) => {
          const logp = tf.logSoftmax(tf.matMul(hh, ww, false, tied).div(0.7));
          return {
            logProbs: logp.mul(tf.oneHot(tf.tensor1d(targets, 'int32'), V)).sum(-1),
            entropy: logp.exp().mul(logp).sum(-1).neg(),
          };
        };
        const mine = tf.grads((hh: tf.Tensor, ww: tf.Tensor) =>
          objective(headScores(hh as tf.Tensor2D, ww as tf.Tensor2D, tied, targets, 0.7, 3, true, keepBytes)),
        )([h, w]);
        const theirs = tf.grads((hh: tf.Tensor, ww: tf.Tensor) =>
          objective(whole(hh as tf.Tensor2D, ww as tf.Tensor2D)),
        )([h, w]);
        const v1 = headScores(h, w, tied, targets, 0.7, 3),
          v2 = whole(h, w);
        expect(maxDiff(v1.logProbs.dataSync(), v2.logProbs.dataSync())).to.be.below(1e-5);
        expect(maxDiff(v1.entropy.dataSync(), v2.entropy.dataSync())).to.be.below(1e-5);
        expect(maxDiff(mine[0].dataSync(), theirs[0].dataSync())).to.be.below(1e-4);
        expect(maxDiff(mine[1].dataSync(), theirs[1].dataSync())).to.be.below(1e-4);
        // a frozen head gives the rows the same gradient, and forms none of its own
        const frozen = tf.grads((hh: tf.Tensor) =>
          objective(headScores(hh as tf.Tensor2D, w, tied, targets, 0.7, 3, false, keepBytes)),
        )([h]);
        expect(maxDiff(frozen[0].dataSync(), theirs[0].dataSync())).to.be.below(1e-4);
        // and so does a head held outside the heap ([V, d] as stored, whichever the orientation)
        const stored = (tied ? w : w.transpose()) as tf.Tensor2D;
        const host = new HostMatrix(stored.dataSync() as Float32Array, V, d);
        const onHost = tf.grads((hh: tf.Tensor) =>
          objective(headScores(hh as tf.Tensor2D, host, tied, targets, 0.7, 3, false, keepBytes)),
        )([h]);
        expect(maxDiff(onHost[0].dataSync(), theirs[0].dataSync())).to.be.below(1e-4);
        expect(
          maxDiff(headScores(h, host, tied, targets, 0.7, 3, false).logProbs.dataSync(), v2.logProbs.dataSync()),
        ).to.be.below(1e-5);
        expect(() => headScores(h, host, tied, targets, 0.7, 3, true)).to.throw(/frozen/);
        tf.dispose([
          h,
          w,
          a,
          b,
          stored,
          ...mine,
          ...theirs,
          ...frozen,
          ...onHost,
          v1.logProbs,
          v1.entropy,
          v2.logProbs,
          v2.entropy,
        ]);
      });
    }
});
