import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { gelu, layerNorm, linear, tokenEntropy, tokenLogProbs, tokenSelfCertainty } from '../../src/models/ops.js';
import { TinyLM, validateConfig, weightShapes, type TinyLMConfig } from '../../src/models/tinylm.js';
import type { PolicyInput } from '../../src/models/types.js';
import { referenceLogits } from './tinylm-reference.js';

const small: TinyLMConfig = { vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 32, seed: 3 };
const reference: TinyLMConfig = { vocabSize: 64, dModel: 128, nHeads: 4, nLayers: 2, context: 64 };

/** Logits [B][T][V] of `tokens` with the given left padding. */
function logitsOf(model: TinyLM, tokens: number[][], leftPad: number[]): number[][][] {
  return tf.tidy(() => {
    const { hidden } = model.forward(tf.tensor2d(tokens, undefined, 'int32'), leftPad);
    return model.logits(hidden).arraySync();
  });
}

function maxAbsDiff(a: readonly number[], b: readonly number[]): number {
  expect(a.length).to.equal(b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

function expectCloseAll(a: readonly number[], b: readonly number[], tol: number): void {
  expect(maxAbsDiff(a, b), `${a} vs ${b}`).to.be.below(tol);
}

/** log-softmax in float64. */
function logSoftmax(z: readonly number[]): number[] {
  const max = Math.max(...z);
  const lse = max + Math.log(z.reduce((s, x) => s + Math.exp(x - max), 0));
  return z.map((x) => x - lse);
}

describe('models/TinyLM', () => {
  let model: TinyLM;
  let startTensors = 0;

  before(async () => {
    await initBackend('cpu');
    expect(tf.getBackend()).to.equal('cpu');
    startTensors = tf.memory().numTensors;
    model = new TinyLM(small);
  });
  after(() => {
    model.dispose();
    expect(tf.memory().numTensors, 'tensors left behind by this suite').to.equal(startTensors);
  });

  describe('configuration', () => {
    it('the reference config has V·d + C·d + L·(12d² + 13d) + 2d + d·V + V ≈ 420k parameters', () => {
      const { vocabSize: V, dModel: d, nLayers: L, context: C } = reference;
      const formula = V * d + C * d + L * (12 * d * d + 13 * d) + 2 * d + d * V + V;
      const counted = Object.values(weightShapes(reference)).reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
      expect(formula).to.equal(421_440);
      expect(counted).to.equal(formula);
      const m = new TinyLM(reference);
      try {
        expect(m.variables().reduce((n, v) => n + v.size, 0)).to.equal(formula);
        expect(m.variables()).to.have.length(Object.keys(weightShapes(reference)).length);
        expect(m.hasValueHead).to.equal(false);
      } finally {
        m.dispose();
      }
    });

    it('a value head adds d + 1 parameters and each extra layer 12d² + 13d', () => {
      const count = (c: TinyLMConfig) =>
        Object.values(weightShapes(c)).reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
      const d = reference.dModel;
      expect(count({ ...reference, valueHead: true }) - count(reference)).to.equal(d + 1);
      expect(weightShapes({ ...reference, valueHead: true })).to.include.keys('value.w', 'value.b');
      expect(weightShapes({ ...reference, valueHead: true })['value.w']).to.deep.equal([d, 1]);
      expect(count({ ...reference, nLayers: 3 }) - count(reference)).to.equal(12 * d * d + 13 * d);
    });

    it('bad configs throw naming the field', () => {
      expect(() => validateConfig({ ...small, dModel: 30, nHeads: 4 })).to.throw(
        /dModel 30 is not divisible by nHeads 4/,
      );
      expect(() => new TinyLM({ ...small, dModel: 30, nHeads: 4 })).to.throw(/dModel 30 is not divisible by nHeads 4/);
      expect(() => new TinyLM({ ...small, nLayers: 1.5 })).to.throw(/nLayers must be a positive integer, got 1\.5/);
      expect(() => new TinyLM({ ...small, vocabSize: 0 })).to.throw(/vocabSize must be a positive integer/);
      expect(() => new TinyLM({ ...small, context: -4 })).to.throw(/context must be a positive integer/);
      expect(() => new TinyLM({ ...small, nHeads: NaN })).to.throw(/nHeads must be a positive integer/);
      expect(() => new TinyLM({ ...small, dModel: 32.5 })).to.throw(/dModel must be a positive integer/);
    });

    it('a failed construction creates no variables', () => {
      const before = tf.memory().numTensors;
      expect(() => new TinyLM({ ...small, nLayers: 0 })).to.throw(/nLayers/);
      expect(tf.memory().numTensors).to.equal(before);
    });

    it('the same seed gives the same weights, another seed different ones', () => {
      const a = new TinyLM(small);
      const b = new TinyLM({ ...small, seed: 4 });
      try {
        for (const name of Object.keys(model.weights)) {
          expect(Array.from(a.weights[name].dataSync()), name).to.deep.equal(
            Array.from(model.weights[name].dataSync()),
          );
        }
        expect(Array.from(b.weights['h0.q.w'].dataSync())).to.not.deep.equal(
          Array.from(model.weights['h0.q.w'].dataSync()),
        );
        // GPT-2 init: gains 1, biases 0
        expect(Array.from(model.weights['h1.ln2.g'].dataSync()).every((x) => x === 1)).to.equal(true);
        expect(Array.from(model.weights['head.b'].dataSync()).every((x) => x === 0)).to.equal(true);
      } finally {
        a.dispose();
        b.dispose();
      }
    });
  });

  describe('forward', () => {
    it('returns hidden [B, T, d], logits [B, T, V] and one cache entry per layer', () => {
      tf.tidy(() => {
        const r = model.forward(
          tf.tensor2d(
            [
              [1, 4, 5],
              [1, 6, 7],
            ],
            undefined,
            'int32',
          ),
          [0, 0],
        );
        expect(r.hidden.shape).to.deep.equal([2, 3, 32]);
        expect(model.logits(r.hidden).shape).to.deep.equal([2, 3, 20]);
        expect(r.cache).to.have.length(2);
        expect(r.cache[0].k.shape).to.deep.equal([2, 4, 3, 8]);
        expect(r.cache[1].v.shape).to.deep.equal([2, 4, 3, 8]);
      });
    });

    it('is causal: changing a later token leaves earlier logits unchanged', () => {
      const a = [1, 7, 8, 9, 10, 11, 12, 13];
      const b = [...a];
      b[5] = 3;
      const [la] = logitsOf(model, [a], [0]);
      const [lb] = logitsOf(model, [b], [0]);
      for (let t = 0; t < 5; t++) expect(maxAbsDiff(la[t], lb[t]), `position ${t}`).to.be.below(1e-6);
      for (let t = 5; t < 8; t++) expect(maxAbsDiff(la[t], lb[t]), `position ${t}`).to.be.above(1e-4);
    });

    it('a left-padded row gives the same logits for its real tokens as the row alone', () => {
      const row = [1, 5, 9, 14, 2];
      const other = [1, 4, 7, 19, 2, 8, 8, 6];
      const [alone] = logitsOf(model, [row], [0]);
      // padding of 0s, and padding of arbitrary ids: the pads are masked, so neither matters
      for (const pads of [
        [0, 0, 0],
        [17, 3, 11],
      ]) {
        const [padded, full] = logitsOf(model, [[...pads, ...row], other], [3, 0]);
        for (let t = 0; t < row.length; t++)
          expect(maxAbsDiff(padded[3 + t], alone[t]), `pads ${pads}, token ${t}`).to.be.below(1e-5);
        const [otherAlone] = logitsOf(model, [other], [0]);
        for (let t = 0; t < other.length; t++)
          expect(maxAbsDiff(full[t], otherAlone[t]), `other row, token ${t}`).to.be.below(1e-5);
      }
    });

    it('continuing from a cache gives the logits of one full pass', () => {
      const tokens = [
        [0, 0, 1, 6, 7, 8, 9],
        [1, 2, 3, 4, 5, 6, 7],
      ];
      const leftPad = [2, 0];
      const full = logitsOf(model, tokens, leftPad);
      const stepped = tf.tidy(() => {
        const first = model.forward(
          tf.tensor2d(
            tokens.map((r) => r.slice(0, 4)),
            undefined,
            'int32',
          ),
          leftPad,
        );
        const rest = model.forward(
          tf.tensor2d(
            tokens.map((r) => r.slice(4)),
            undefined,
            'int32',
          ),
          leftPad,
          4,
          first.cache,
        );
        return model.logits(rest.hidden).arraySync();
      });
      for (let b = 0; b < 2; b++) {
        for (let t = 0; t < 3; t++)
          expect(maxAbsDiff(stepped[b][t], full[b][4 + t]), `row ${b}, token ${4 + t}`).to.be.below(1e-5);
      }
    });

    it('matches an independent plain-loop implementation, with and without left padding', () => {
      // guards against: a wrong attention scale (1/hd for 1/sqrt(hd)), GELU variant, LayerNorm
      // epsilon or placement, head split, position offset or pad masking in forward
      const c: TinyLMConfig = { vocabSize: 5, dModel: 4, nHeads: 2, nLayers: 2, context: 4 };
      // Weights of order 1 (not GPT-2's 0.02), so that attention is far from uniform and every term shows.
      const shapes = weightShapes(c);
      let k = 0;
      const values = Object.fromEntries(
        Object.entries(shapes).map(([name, shape]) => {
          const [base, scale] = name.endsWith('.g')
            ? [1, 0.3]
            : name.endsWith('.b')
              ? [0, 0.2]
              : name.endsWith('_emb')
                ? [0, 1]
                : [0, 0.8];
          return [
            name,
            Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () =>
              Math.fround(base + scale * Math.sin(0.7 * ++k)),
            ),
          ];
        }),
      );
      const initial = Object.fromEntries(Object.entries(values).map(([name, v]) => [name, tf.tensor(v, shapes[name])]));
      const m = new TinyLM(c, initial);
      tf.dispose(Object.values(initial));
      try {
        // row 1 is [2, 1, 4] after one pad: it must compute what [2, 1, 4] does alone
        const [full, padded] = logitsOf(
          m,
          [
            [1, 3, 4, 2],
            [0, 2, 1, 4],
          ],
          [0, 1],
        );
        const want = [referenceLogits(c, values, [1, 3, 4, 2]), referenceLogits(c, values, [2, 1, 4])];
        full.forEach((row, t) => expectCloseAll(row, want[0][t], 1e-4));
        padded.slice(1).forEach((row, t) => expectCloseAll(row, want[1][t], 1e-4));
        expect(Math.max(...want[0].flat().map(Math.abs))).to.be.above(0.5); // not a trivially small output
      } finally {
        m.dispose();
      }
    });

    it('sequences beyond the context throw', () => {
      const long = Array.from({ length: 33 }, (_, i) => 1 + (i % 19));
      expect(() =>
        tf.tidy(() => {
          model.forward(tf.tensor2d([long], undefined, 'int32'), [0]);
        }),
      ).to.throw(/33 tokens exceeds context 32/);
      expect(() =>
        tf.tidy(() => {
          model.forward(tf.tensor2d([[1, 2, 3]], undefined, 'int32'), [0], 30);
        }),
      ).to.throw(/33 tokens exceeds context 32/);
      // exactly the context is fine
      expect(
        tf.tidy(() => model.forward(tf.tensor2d([long.slice(0, 32)], undefined, 'int32'), [0]).hidden.shape),
      ).to.deep.equal([1, 32, 32]);
    });
  });

  describe('score', () => {
    const inputs: PolicyInput[] = [
      { prompt: [1, 5, 9], completion: [12, 3, 7, 2] },
      { prompt: [1, 4, 7, 19, 2], completion: [8] },
      { prompt: [1], completion: [] },
      { prompt: [1, 6], completion: [6, 6] },
    ];
    const P = 5;
    const Tc = 4;

    it('completionLogits: [B, Tc] targets and mask, logits predicting each completion token', () => {
      tf.tidy(() => {
        const { logits, hidden, targets, mask } = model.completionLogits(inputs);
        expect(logits.shape).to.deep.equal([4, Tc, 20]);
        expect(hidden.shape).to.deep.equal([4, Tc, 32]);
        expect(targets.arraySync()).to.deep.equal([
          [12, 3, 7, 2],
          [8, 0, 0, 0],
          [0, 0, 0, 0],
          [6, 6, 0, 0],
        ]);
        expect(mask.arraySync()).to.deep.equal([
          [1, 1, 1, 1],
          [1, 0, 0, 0],
          [0, 0, 0, 0],
          [1, 1, 0, 0],
        ]);
        // row 0 alone, unpadded: completion token j is predicted at position prompt.length - 1 + j
        const [alone] = logitsOf(model, [[1, 5, 9, 12, 3, 7]], [0]);
        const got = logits.arraySync()[0];
        for (let j = 0; j < Tc; j++) expect(maxAbsDiff(got[j], alone[2 + j]), `token ${j}`).to.be.below(1e-5);
        expect(P).to.equal(Math.max(...inputs.map((r) => r.prompt.length)));
      });
    });

    for (const temperature of [1, 0.7]) {
      it(`log-probs equal log-softmax(completionLogits / ${temperature}) at the targets and are 0 on padding`, () => {
        const { logits, logProbs, entropy, mask } = tf.tidy(() => {
          const s = model.score(inputs, temperature);
          return {
            logits: model.completionLogits(inputs).logits.arraySync(),
            logProbs: s.logProbs.arraySync(),
            entropy: s.entropy.arraySync(),
            mask: s.mask.arraySync(),
          };
        });
        inputs.forEach((r, b) => {
          for (let j = 0; j < Tc; j++) {
            const lp = logSoftmax(logits[b][j].map((z) => z / temperature));
            if (j < r.completion.length) {
              expect(mask[b][j]).to.equal(1);
              expect(logProbs[b][j], `row ${b}, token ${j}`).to.be.closeTo(lp[r.completion[j]], 1e-5);
              expect(logProbs[b][j]).to.be.below(0);
            } else {
              expect(mask[b][j]).to.equal(0);
              expect(logProbs[b][j], `padding row ${b}, column ${j}`).to.equal(0);
            }
            const h = -lp.reduce((s, l) => s + Math.exp(l) * l, 0);
            expect(entropy[b][j], `entropy row ${b}, column ${j}`).to.be.closeTo(h, 1e-5);
          }
        });
      });
    }

    it('a scoring pass in a gradient tape leaves no tensor behind once value and grads are disposed', () => {
      // score has no tidy of its own (it runs inside the trainer's tape), so count around the tape itself.
      // guards against: forward or score keeping a tensor (tf.keep, a cached tensor) past the tape
      const before = tf.memory().numTensors;
      const { value, grads } = tf.variableGrads(
        () => model.score(inputs, 0.7).logProbs.sum() as tf.Scalar,
        model.variables(),
      );
      tf.dispose([value, ...Object.values(grads)]);
      expect(tf.memory().numTensors, 'leaked tensors').to.equal(before);
    });

    it('a row scores the same alone as in a padded batch', () => {
      const together = tf.tidy(() => model.score(inputs, 0.7).logProbs.arraySync());
      inputs.forEach((r, b) => {
        if (r.completion.length === 0) return;
        const [alone] = tf.tidy(() => model.score([r], 0.7).logProbs.arraySync());
        expect(maxAbsDiff(together[b].slice(0, r.completion.length), alone), `row ${b}`).to.be.below(1e-5);
      });
    });

    it('log-probs carry gradients to every weight', () => {
      tf.tidy(() => {
        const { grads } = tf.variableGrads(() => model.score(inputs).logProbs.sum() as tf.Scalar, model.variables());
        for (const [name, v] of Object.entries(model.weights)) {
          const g = grads[v.name];
          expect(g, name).to.not.equal(undefined);
          expect(g.shape, name).to.deep.equal(v.shape);
          expect(Number.isFinite(g.abs().sum().dataSync()[0]), name).to.equal(true);
        }
        expect(grads[model.weights['h1.fc.w'].name].abs().sum().dataSync()[0]).to.be.above(0);
      });
    });

    it('rejects token ids outside the vocabulary instead of scoring them', () => {
      // tf.oneHot maps an id >= vocabSize to a zero row, so such a target silently gets
      // log-prob 0 (probability 1) and such an input a zero embedding.
      const outOfVocab = [
        [{ prompt: [1, 4], completion: [50] }],
        [{ prompt: [1, 25], completion: [5] }],
        [{ prompt: [1, 4], completion: [5, -1] }],
      ];
      for (const input of outOfVocab) {
        // no tidy around the call: guards against checking the ids only after building tensors
        const before = tf.memory().numTensors;
        expect(() => model.score(input), JSON.stringify(input)).to.throw(/50|25|-1/);
        expect(tf.memory().numTensors, 'tensors left by a refused input').to.equal(before);
      }
    });

    it('rejects a negative or non-finite temperature, naming it (as MlpPolicy.score does)', () => {
      // logits / -1 would silently score under the reversed distribution; NaN and Infinity give NaN or 0s.
      const input = [{ prompt: [1, 4], completion: [5, 6] }];
      for (const temperature of [-1, -0.5, NaN, Infinity]) {
        // no tidy around the call: guards against checking the temperature only after building tensors
        const before = tf.memory().numTensors;
        expect(() => model.score(input, temperature), `temperature ${temperature}`).to.throw(/temperature/);
        expect(tf.memory().numTensors, 'tensors left by a refused temperature').to.equal(before);
      }
    });

    it('rejects an empty batch, an empty prompt and a sequence beyond the context', () => {
      expect(() => model.score([])).to.throw(/nothing to score/);
      expect(() =>
        tf.tidy(() => {
          model.score([
            { prompt: [1, 2], completion: [3] },
            { prompt: [], completion: [3] },
          ]);
        }),
      ).to.throw(/row 1 has an empty prompt/);
      // P + Tc - 1 tokens are fed: 20 + 14 - 1 = 33 > 32
      const prompt = Array.from({ length: 20 }, () => 5);
      expect(() =>
        tf.tidy(() => {
          model.score([{ prompt, completion: new Array(14).fill(6) }]);
        }),
      ).to.throw(/exceeds context 32/);
      expect(tf.tidy(() => model.score([{ prompt, completion: new Array(13).fill(6) }]).logProbs.shape)).to.deep.equal([
        1, 13,
      ]);
    });
  });

  describe('entropy and self-certainty (ops)', () => {
    // Row 0: a peaked distribution; row 1: uniform; row 2: one very confident token.
    const z = [
      [2, 0, -1, 0.5],
      [0.3, 0.3, 0.3, 0.3],
      [10, -3, -3, -3],
    ];

    it('tokenEntropy is -Σ p log p of each row', () => {
      const got = tf.tidy(() => tokenEntropy(tf.tensor3d([z])).arraySync())[0];
      z.forEach((row, i) => {
        const lp = logSoftmax(row);
        expect(got[i], `row ${i}`).to.be.closeTo(-lp.reduce((s, l) => s + Math.exp(l) * l, 0), 1e-5);
      });
      expect(got[1]).to.be.closeTo(Math.log(4), 1e-6);
    });

    it('tokenSelfCertainty is KL(U || p) = logsumexp - mean - log V: 0 for uniform, positive otherwise', () => {
      const got = tf.tidy(() => tokenSelfCertainty(tf.tensor3d([z])).arraySync())[0];
      z.forEach((row, i) => {
        const lp = logSoftmax(row);
        const kl = lp.reduce((s, l) => s + (Math.log(1 / 4) - l) / 4, 0); // Σ u (log u - log p)
        expect(got[i], `row ${i}`).to.be.closeTo(kl, 1e-5);
      });
      expect(got[1]).to.be.closeTo(0, 1e-6);
      expect(got[0]).to.be.above(0);
      expect(got[2]).to.be.above(got[0]);
      // by hand for row 0: logsumexp(2, 0, -1, 0.5) - 0.375 - log 4
      const lse = Math.log(Math.exp(2) + 1 + Math.exp(-1) + Math.exp(0.5));
      expect(got[0]).to.be.closeTo(lse - 0.375 - Math.log(4), 1e-5);
    });
  });

  describe('building blocks (ops)', () => {
    it('linear with its hand-written gradient matches autodiff of x·w + b', () => {
      tf.tidy(() => {
        const x = tf.randomNormal([2, 3, 4], 0, 1, 'float32', 1);
        const w = tf.randomNormal([4, 5], 0, 1, 'float32', 2) as tf.Tensor2D;
        const b = tf.randomNormal([5], 0, 1, 'float32', 3);
        const up = tf.randomNormal([2, 3, 5], 0, 1, 'float32', 4);
        const ours = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
          linear(xx, ww as tf.Tensor2D, bb)
            .mul(up)
            .sum(),
        )([x, w, b]);
        const auto = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
          tf
            .matMul(xx.reshape([6, 4]), ww)
            .add(bb)
            .reshape([2, 3, 5])
            .mul(up)
            .sum(),
        )([x, w, b]);
        expect(linear(x, w, b).shape).to.deep.equal([2, 3, 5]);
        expect(
          maxAbsDiff(
            Array.from(linear(x, w, b).dataSync()),
            Array.from(
              tf
                .matMul(x.reshape([6, 4]), w)
                .add(b)
                .dataSync(),
            ),
          ),
        ).to.be.below(1e-5);
        ours.forEach((g, i) =>
          expect(maxAbsDiff(Array.from(g.dataSync()), Array.from(auto[i].dataSync())), `input ${i}`).to.be.below(1e-5),
        );
        const [gx, gw] = tf.grads((xx: tf.Tensor, ww: tf.Tensor) =>
          linear(xx, ww as tf.Tensor2D)
            .mul(up)
            .sum(),
        )([x, w]);
        const [ax, aw] = tf.grads((xx: tf.Tensor, ww: tf.Tensor) =>
          tf
            .matMul(xx.reshape([6, 4]), ww)
            .reshape([2, 3, 5])
            .mul(up)
            .sum(),
        )([x, w]);
        expect(maxAbsDiff(Array.from(gx.dataSync()), Array.from(ax.dataSync()))).to.be.below(1e-5);
        expect(maxAbsDiff(Array.from(gw.dataSync()), Array.from(aw.dataSync()))).to.be.below(1e-5);
      });
    });

    it('gelu is exact (erf) GELU and layerNorm normalises with epsilon 1e-5', () => {
      tf.tidy(() => {
        const g = Array.from(gelu(tf.tensor1d([-1, 0, 1, 2])).dataSync());
        expectCloseAll(g, [-0.15865525, 0, 0.84134475, 1.95449974], 1e-6);
        const x = [1, 2, 3, 6];
        const mean = 3;
        const variance = (4 + 1 + 0 + 9) / 4;
        const want = x.map(
          (v, i) => ((v - mean) / Math.sqrt(variance + 1e-5)) * [1, 2, 0.5, 1][i] + [0, 0.1, 0, -1][i],
        );
        const got = Array.from(
          layerNorm(tf.tensor2d([x]), tf.tensor1d([1, 2, 0.5, 1]), tf.tensor1d([0, 0.1, 0, -1])).dataSync(),
        );
        expectCloseAll(got, want, 1e-5);
      });
    });

    it('tokenLogProbs picks log-softmax at the targets', () => {
      const z = [
        [
          [1, 2, 0.5],
          [0, 0, 3],
        ],
      ];
      const got = tf.tidy(() =>
        Array.from(tokenLogProbs(tf.tensor3d(z), tf.tensor2d([[2, 0]], undefined, 'int32')).dataSync()),
      );
      expectCloseAll(got, [logSoftmax(z[0][0])[2], logSoftmax(z[0][1])[0]], 1e-6);
    });
  });

  describe('value head', () => {
    it('values(hidden) is [B, T], equals hidden · value.w + value.b, and score gives [B, Tc]', () => {
      const vm = new TinyLM({ ...small, valueHead: true });
      try {
        expect(vm.hasValueHead).to.equal(true);
        tf.tidy(() => {
          vm.weights['value.b'].assign(tf.tensor1d([0.25]));
          const { hidden } = vm.forward(
            tf.tensor2d(
              [
                [1, 4, 5],
                [0, 1, 6],
              ],
              undefined,
              'int32',
            ),
            [0, 1],
          );
          const values = vm.values(hidden);
          expect(values.shape).to.deep.equal([2, 3]);
          const h = hidden.arraySync();
          const w = vm.weights['value.w'].dataSync();
          const byHand = h[0][2].reduce((s, x, i) => s + x * w[i], 0.25);
          expect(values.arraySync()[0][2]).to.be.closeTo(byHand, 1e-5);
          const scored = vm.score([
            { prompt: [1, 4], completion: [5, 6, 7] },
            { prompt: [1], completion: [9] },
          ]);
          expect(scored.values?.shape).to.deep.equal([2, 3]);
          expect(scored.values?.shape).to.deep.equal(scored.logProbs.shape);
        });
      } finally {
        vm.dispose();
      }
    });

    it('a model without one throws from values() and scores without values', () => {
      expect(model.hasValueHead).to.equal(false);
      expect(model.weights).to.not.have.property('value.w');
      tf.tidy(() => {
        const { hidden } = model.forward(tf.tensor2d([[1, 4]], undefined, 'int32'), [0]);
        expect(() => model.values(hidden)).to.throw(/no value head \(set valueHead: true\)/);
        expect(model.score([{ prompt: [1], completion: [4] }]).values).to.equal(undefined);
      });
    });
  });
});
