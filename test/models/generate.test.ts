import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { generate, type GenerateOptions, type Generation } from '../../src/models/generate.js';
import { TinyLM, type TinyLMConfig } from '../../src/models/tinylm.js';

const small: TinyLMConfig = { vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 32, seed: 1 };

// Different lengths in one batch, so rows are left-padded by different amounts.
const prompts = [[1, 5, 6, 7], [1], [1, 3, 4, 12, 13, 14], [1, 19, 18]];

/** Per-token log-probs of each generated completion as `score` computes them. */
function scoredLogProbs(model: TinyLM, ps: number[][], gens: Generation[], temperature: number): number[][] {
  const inputs = ps.map((prompt, b) => ({ prompt, completion: gens[b].tokens }));
  const lp = tf.tidy(() => model.score(inputs, temperature).logProbs.arraySync());
  return lp.map((row, b) => row.slice(0, gens[b].tokens.length));
}

function expectClose(a: number[], b: number[], tol: number, what: string): void {
  expect(a.length, what).to.equal(b.length);
  a.forEach((x, i) => expect(x, `${what}[${i}]`).to.be.closeTo(b[i], tol));
}

describe('models/generate', () => {
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

  describe('batching', () => {
    it('greedy on a batch of different-length prompts equals one prompt at a time', () => {
      const o: GenerateOptions = { maxNewTokens: 12, temperature: 0 };
      const batched = generate(model, prompts, o);
      expect(batched).to.have.length(prompts.length);
      prompts.forEach((p, b) => {
        const [alone] = generate(model, [p], o);
        expect(batched[b].tokens, `row ${b}`).to.deep.equal(alone.tokens);
        expectClose(batched[b].logProbs, alone.logProbs, 1e-5, `row ${b} logProbs`);
      });
      // not a degenerate model: the rows do not all say the same thing
      expect(new Set(batched.map((g) => g.tokens.join(','))).size).to.equal(prompts.length);
    });

    it('a batch whose logits exceed the budget runs in parts with the same draws', () => {
      // sampled, with a stop token and finished rows leaving: parts of 1 and 3 rows against one batch of 4 and 8
      const many = [...prompts, ...prompts.map((p) => [...p, 2])];
      for (const dropFinished of [true, false]) {
        const o: GenerateOptions = { maxNewTokens: 10, temperature: 1, seed: 3, stop: [4, 9], dropFinished };
        const whole = generate(model, many, o);
        expect(whole.some((g) => g.stopped) && whole.some((g) => !g.stopped), 'rows both stop and run on').to.equal(
          true,
        );
        for (const rows of [1, 3]) {
          const parted = generate(model, many, { ...o, logitsBudget: rows * small.vocabSize });
          expect(
            parted.map((g) => g.tokens),
            `${rows} rows a part`,
          ).to.deep.equal(whole.map((g) => g.tokens));
          parted.forEach((g, b) => expectClose(g.logProbs, whole[b].logProbs, 1e-5, `row ${b}`));
          expect(parted.map((g) => g.stopped)).to.deep.equal(whole.map((g) => g.stopped));
        }
      }
    });

    it('greedy tokens are the argmax of a full forward pass at every step', () => {
      const [g] = generate(model, [prompts[2]], { maxNewTokens: 8, temperature: 0 });
      const seq = [...prompts[2], ...g.tokens];
      const logits = tf.tidy(
        () => model.logits(model.forward(tf.tensor2d([seq], undefined, 'int32'), [0]).hidden).arraySync()[0],
      );
      g.tokens.forEach((tok, j) => {
        const row = logits[prompts[2].length - 1 + j];
        expect(tok, `step ${j}`).to.equal(row.indexOf(Math.max(...row)));
      });
    });
  });

  describe('seeds and log-probabilities', () => {
    it('the same seed gives the same tokens; another seed different ones', () => {
      const o = { maxNewTokens: 10, temperature: 1 };
      const a = generate(model, prompts, { ...o, seed: 5 });
      const b = generate(model, prompts, { ...o, seed: 5 });
      const c = generate(model, prompts, { ...o, seed: 6 });
      expect(a.map((g) => g.tokens)).to.deep.equal(b.map((g) => g.tokens));
      expect(a.map((g) => g.logProbs)).to.deep.equal(b.map((g) => g.logProbs));
      expect(a.map((g) => g.tokens)).to.not.deep.equal(c.map((g) => g.tokens));
    });

    for (const o of [
      { temperature: 0.7 },
      { temperature: 1 },
      { temperature: 0.7, topK: 5 },
      { temperature: 1.3, topP: 0.8 },
    ]) {
      it(`logProbs equal score's log-probs of the completions at the same temperature (${JSON.stringify(o)})`, () => {
        const gens = generate(model, prompts, { ...o, maxNewTokens: 10, seed: 11, eos: 2 });
        const scored = scoredLogProbs(model, prompts, gens, o.temperature);
        gens.forEach((g, b) => {
          expect(g.tokens.length).to.be.above(0);
          expectClose(g.logProbs, scored[b], 1e-4, `row ${b}`);
        });
      });
    }

    it('greedy logProbs are log-probs at temperature 1 (what score(…, 1) gives)', () => {
      const gens = generate(model, prompts, { maxNewTokens: 8, temperature: 0 });
      const scored = scoredLogProbs(model, prompts, gens, 1);
      gens.forEach((g, b) => expectClose(g.logProbs, scored[b], 1e-4, `row ${b}`));
    });

    it("score at the sampler's temperature 0 (greedy) reproduces the greedy logProbs or refuses, never NaN", () => {
      // sampleToken documents that greedy log-probs are taken at temperature 1 ("what a trainer
      // recomputes from logits / temperature"), and score says `temperature` divides the logits
      // "as the sampler did". A trainer that passes its sampling temperature (0) on to score must
      // get those same numbers, or an error naming the temperature (as MlpPolicy.score gives),
      // but not logits / 0.
      const gens = generate(model, prompts, { maxNewTokens: 6, temperature: 0 });
      let scored: number[][];
      try {
        scored = scoredLogProbs(model, prompts, gens, 0);
      } catch (err) {
        expect((err as Error).message).to.match(/temperature/);
        return;
      }
      gens.forEach((g, b) => {
        expect(scored[b].every(Number.isFinite), `row ${b} score(…, 0) log-probs are finite: ${scored[b]}`).to.equal(
          true,
        );
        expectClose(g.logProbs, scored[b], 1e-4, `row ${b}`);
      });
    });
  });

  describe('stopping', () => {
    /** A token that row 0 first emits a few steps in (at `at`) and row 1 never emits, greedy. */
    const stopper = (maxNewTokens: number) => {
      const base = generate(model, prompts, { maxNewTokens, temperature: 0 });
      let eos = -1;
      let at = -1;
      for (let j = 2; j < maxNewTokens - 2 && eos < 0; j++) {
        const t = base[0].tokens[j];
        if (!base[1].tokens.includes(t) && base[0].tokens.indexOf(t) === j) [eos, at] = [t, j];
      }
      expect(eos, `no usable EOS in ${JSON.stringify(base.map((g) => g.tokens))}`).to.be.at.least(0);
      return { base, eos, at };
    };

    it('a row stops at EOS (kept in its tokens, stopped: true) while the other rows continue', () => {
      const maxNewTokens = 10;
      const { base, eos, at } = stopper(maxNewTokens);

      const gens = generate(model, prompts, { maxNewTokens, temperature: 0, eos });
      expect(gens[0].tokens).to.deep.equal(base[0].tokens.slice(0, at + 1));
      expect(gens[0].tokens.at(-1)).to.equal(eos);
      expect(gens[0].stopped).to.equal(true);
      expect(gens[0].logProbs).to.have.length(at + 1);
      expectClose(gens[0].logProbs, base[0].logProbs.slice(0, at + 1), 1e-5, 'stopped row');
      expect(gens[1].tokens).to.deep.equal(base[1].tokens);
      expect(gens[1].tokens).to.have.length(maxNewTokens);
      expect(gens[1].stopped).to.equal(false);
      expectClose(gens[1].logProbs, base[1].logProbs, 1e-5, 'running row');
      gens.forEach((g, b) => {
        const first = base[b].tokens.indexOf(eos);
        expect(g.tokens, `row ${b}`).to.deep.equal(first < 0 ? base[b].tokens : base[b].tokens.slice(0, first + 1));
        expect(g.stopped, `row ${b}`).to.equal(first >= 0);
      });
    });

    it('a stop token ends a row as EOS does, and EOS still ends rows beside it', () => {
      const maxNewTokens = 10;
      const { base, eos: stop, at } = stopper(maxNewTokens);
      const gens = generate(model, prompts, { maxNewTokens, temperature: 0, stop: [stop] });
      expect(gens[0]).to.deep.include({ tokens: base[0].tokens.slice(0, at + 1), stopped: true });
      expect(gens[1]).to.deep.include({ tokens: base[1].tokens, stopped: false });
      // row 1's first token as EOS: it stops there, row 0 still at the stop token
      const both = generate(model, prompts, { maxNewTokens, temperature: 0, eos: base[1].tokens[0], stop: [stop] });
      expect(both[1]).to.deep.include({ tokens: base[1].tokens.slice(0, 1), stopped: true });
      const first = base[0].tokens.indexOf(base[1].tokens[0]);
      expect(both[0].tokens).to.deep.equal(base[0].tokens.slice(0, (first >= 0 && first < at ? first : at) + 1));
    });

    it('maxNewTokens is respected: every row gets exactly that many tokens without EOS', () => {
      for (const maxNewTokens of [0, 1, 7]) {
        const gens = generate(model, prompts, { maxNewTokens, temperature: 1, seed: 3 });
        gens.forEach((g, b) => {
          expect(g.tokens, `row ${b}, max ${maxNewTokens}`).to.have.length(maxNewTokens);
          expect(g.logProbs).to.have.length(maxNewTokens);
          expect(g.stopped).to.equal(false);
          expect(g.tokens.every((t) => Number.isInteger(t) && t >= 0 && t < small.vocabSize)).to.equal(true);
        });
      }
    });

    it('an EOS row never exceeds maxNewTokens either', () => {
      const gens = generate(model, prompts, { maxNewTokens: 5, temperature: 1.5, seed: 9, eos: 2 });
      gens.forEach((g) => {
        expect(g.tokens.length).to.be.within(1, 5);
        expect(g.stopped).to.equal(g.tokens.at(-1) === 2);
        expect(g.tokens.slice(0, -1)).to.not.include(2);
      });
      // with this seed some rows stop early and some run to the limit
      expect(gens.some((g) => g.stopped && g.tokens.length < 5)).to.equal(true);
      expect(gens.some((g) => !g.stopped && g.tokens.length === 5)).to.equal(true);
    });
  });

  describe('errors and resources', () => {
    it('prompt + new tokens beyond the context throws; exactly the context is fine', () => {
      const long = Array.from({ length: 30 }, (_, i) => 1 + (i % 19));
      expect(() => generate(model, [[1, 2], long], { maxNewTokens: 3, temperature: 0 })).to.throw(
        /a prompt of 30 tokens and maxNewTokens 3 need 33 positions; the model has 32/,
      );
      const [g] = generate(model, [long], { maxNewTokens: 2, temperature: 0 });
      expect(g.tokens).to.have.length(2);
    });

    it('an empty prompt throws naming it; no prompts gives no generations', () => {
      expect(() => generate(model, [[1, 4], []], { maxNewTokens: 2 })).to.throw(/prompt 1 is empty/);
      expect(generate(model, [], { maxNewTokens: 2 })).to.deep.equal([]);
    });

    it('a prompt token outside the vocabulary throws naming it', () => {
      // tf.oneHot would silently embed id 25 (vocabSize 20) as a zero vector.
      expect(() =>
        generate(
          model,
          [
            [1, 4],
            [1, 25],
          ],
          { maxNewTokens: 2, temperature: 0 },
        ),
      ).to.throw(/^generate: prompt 1 has token id 25 at position 1, outside vocabulary of 20$/);
    });

    it('invalid options throw naming the option', () => {
      expect(() => generate(model, prompts, { maxNewTokens: -1 })).to.throw(
        /maxNewTokens must be a non-negative integer, got -1/,
      );
      expect(() => generate(model, prompts, { maxNewTokens: 2.5 })).to.throw(/maxNewTokens.*2\.5/);
      expect(() => generate(model, prompts, { maxNewTokens: 2, temperature: -1 })).to.throw(/temperature/);
      expect(() => generate(model, prompts, { maxNewTokens: 2, topK: 1.5 })).to.throw(/topK/);
      expect(() => generate(model, prompts, { maxNewTokens: 2, topP: 2 })).to.throw(/topP/);
    });

    it('leaves tf.memory().numTensors unchanged (no leaked cache or logits)', () => {
      const cases: GenerateOptions[] = [
        { maxNewTokens: 9, temperature: 1, seed: 1 },
        { maxNewTokens: 0 },
        { maxNewTokens: 1, temperature: 0 },
        {
          maxNewTokens: 12,
          temperature: 0,
          eos: generate(model, [prompts[0]], { maxNewTokens: 1, temperature: 0 })[0].tokens[0],
        },
      ];
      generate(model, prompts, cases[0]); // warm-up
      for (const o of cases) {
        const before = tf.memory().numTensors;
        generate(model, prompts, o);
        generate(model, [prompts[0]], o); // a single row that stops at once when eos is its first token
        expect(tf.memory().numTensors, JSON.stringify(o)).to.equal(before);
      }
    });
  });

  describe('on wasm', () => {
    let cpuTokens: number[][];
    before(async () => {
      cpuTokens = generate(model, prompts, { maxNewTokens: 8, temperature: 0 }).map((g) => g.tokens);
      await initBackend('wasm');
      expect(tf.getBackend()).to.equal('wasm');
    });
    after(async () => {
      await initBackend('cpu');
    });

    it('greedy generation gives the same tokens as on cpu', () => {
      const m = new TinyLM(small);
      try {
        const before = tf.memory().numTensors;
        const gens = generate(m, prompts, { maxNewTokens: 8, temperature: 0 });
        expect(gens.map((g) => g.tokens)).to.deep.equal(cpuTokens);
        expect(tf.memory().numTensors).to.equal(before);
      } finally {
        m.dispose();
      }
    });
  });
});
