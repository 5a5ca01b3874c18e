import type { TinyLMConfig } from '../../src/models/tinylm.js';
import type { TrainSample } from '../../src/rl/trainer.js';

export const small: TinyLMConfig = {
  vocabSize: 12,
  dModel: 16,
  nHeads: 2,
  nLayers: 1,
  context: 16,
  valueHead: true,
  seed: 7,
};

/**
 * Seven samples of two roles on one model: proposers write up to 6 tokens (one writes none),
 * solvers 1 or 2, so every split into threes has its own row count, token count and grid width.
 * Only some rows carry reference log-probs; each role has its own KL coefficient and weight.
 */
export function batch(): TrainSample[] {
  const lengths = [6, 1, 0, 2, 4, 1, 3];
  return lengths.map((n, i) => {
    const proposer = i % 2 === 0;
    const completion = Array.from({ length: n }, (_, t) => 2 + ((i * 3 + t) % 9));
    const tok = (f: (t: number) => number) => completion.map((_, t) => f(t));
    return {
      model: 'm',
      role: proposer ? 'proposer' : 'solver',
      prompt: [1, 3 + (i % 4)],
      completion,
      oldLogProbs: tok((t) => -2.3 - 0.1 * ((i + t) % 3)),
      advantages: proposer ? tok((t) => (t % 2 ? 0.7 : -0.4) * (i - 3)) : i % 4 === 1 ? 1 : -1,
      refLogProbs: i === 3 ? undefined : tok((t) => -2.6 + 0.05 * t),
      klCoef: proposer ? 0.05 : 0.2,
      lossWeight: proposer ? 0.5 : 1,
      returns: tok((t) => (i + t) % 2),
      oldValues: tok(() => 0.1 * i),
    };
  });
}
