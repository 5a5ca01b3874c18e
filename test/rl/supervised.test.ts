import { expect } from 'chai';
import { initBackend } from '../../src/backend/index.js';
import { generate } from '../../src/models/generate.js';
import { evaluateNll, trainSupervised } from '../../src/rl/supervised.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

describe('supervised training', () => {
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  it('learns a small corpus: loss falls and greedy decoding reproduces it', () => {
    const tok = new CharTokenizer({ chars: 'abcdxyz', roles: [] });
    const texts = ['abcd', 'xyz'];
    const examples = texts.map((t, i) => ({
      prompt: [tok.bos, tok.encode('ax')[i]],
      completion: [...tok.encode(t.slice(1)), tok.eos],
    }));
    const m = new TinyLM({ vocabSize: tok.size, dModel: 32, nHeads: 2, nLayers: 1, context: 12, seed: 1 });
    const before = evaluateNll(m, examples);
    const losses = trainSupervised(m, examples, { steps: 60, batchSize: 2, lr: 1e-2, seed: 1 });
    expect(losses).to.have.length(60);
    expect(before).to.be.greaterThan(1.5);
    expect(evaluateNll(m, examples)).to.be.lessThan(0.05);
    const out = generate(
      m,
      examples.map((e) => e.prompt),
      { maxNewTokens: 6, temperature: 0, eos: tok.eos },
    );
    expect(out.map((g, i) => tok.decode(examples[i].prompt) + tok.decode(g.tokens))).to.deep.equal(texts);
    m.dispose();
  });

  it('rejects an empty corpus and a bad batch size', () => {
    const m = new TinyLM({ vocabSize: 8, dModel: 8, nHeads: 2, nLayers: 1, context: 8 });
    expect(() => trainSupervised(m, [], { steps: 1, batchSize: 1, lr: 1e-3 })).to.throw(/no examples/);
    expect(() => trainSupervised(m, [{ prompt: [1], completion: [2] }], { steps: 1, batchSize: 0, lr: 1e-3 })).to.throw(
      /batchSize/,
    );
    m.dispose();
  });
});
