import { expect } from 'chai';
import { fullRow, sampleCompact } from '../../src/models/hf/compact-sampling.js';
import { shareRows } from '../../src/models/hf/shared-rows.js';
import { sampleToken } from '../../src/models/sampling.js';
import { Rng } from '../../src/util/rng.js';

// The compact sampler must be the full sampler on the row it stands for: greedy to the token,
// the statistics to float precision, and sampling in distribution (its draw order differs).
describe('sampling a compact row (a base made with sharedRows)', () => {
  const V = 300;
  const split = shareRows(new Float32Array(V), V, 1, new Set([3, 7, 50, 51, 120, 299]), true);
  const row = (seed: number, shared: number) => {
    const rng = new Rng(seed);
    return Float32Array.from({ length: split.ids.length }, (_, i) =>
      i === split.ids.length - 1 ? shared : 4 * rng.next() - 2,
    );
  };

  it('greedy: the full row argmax (ties to the first id), its log-prob, entropy and self-certainty', () => {
    for (const [seed, shared] of [
      [1, -1],
      [2, 5],
      [3, 0.3],
    ]) {
      const z = row(seed, shared);
      const mine = sampleCompact(z, split, { temperature: 0 }, new Rng(9));
      const theirs = sampleToken(fullRow(z, split), { temperature: 0 }, new Rng(9));
      expect(mine.token).to.equal(theirs.token);
      for (const k of ['logProb', 'entropy', 'selfCertainty'] as const) expect(mine[k]).to.be.closeTo(theirs[k], 1e-5);
    }
    // the shared row ties an own id's logit: the smaller id (0, a sharing one) wins, as argmax's first index
    const z = row(4, 0);
    z[3] = 10;
    z[split.ids.length - 1] = 10;
    expect(sampleCompact(z, split, { temperature: 0 }, new Rng(1)).token).to.equal(0);
    expect(sampleToken(fullRow(z, split), { temperature: 0 }, new Rng(1)).token).to.equal(0);
  });

  it('samples the full distribution at temperature 0.7, each draw with its full log-prob; top-p is the full sampler', () => {
    const z = row(5, 0.5);
    const full = fullRow(z, split);
    const k = 1 / 0.7;
    const max = Math.max(...full);
    const total = full.reduce((a, x) => a + Math.exp(k * (x - max)), 0);
    const p = (t: number) => Math.exp(k * (full[t] - max)) / total;
    const rng = new Rng(11);
    const counts = new Map<number, number>();
    const draws = 40000;
    let sharedDraws = 0;
    for (let i = 0; i < draws; i++) {
      const s = sampleCompact(z, split, { temperature: 0.7 }, rng);
      expect(s.logProb).to.be.closeTo(Math.log(p(s.token)), 1e-6);
      counts.set(s.token, (counts.get(s.token) ?? 0) + 1);
      if (split.index[s.token] === split.ids.length - 1) sharedDraws++;
    }
    // each own id, and the shared class as a whole, within 4 standard errors
    const check = (got: number, prob: number) =>
      expect(Math.abs(got / draws - prob)).to.be.below(4 * Math.sqrt((prob * (1 - prob)) / draws) + 1e-4);
    for (const id of split.ids.slice(0, -1)) check(counts.get(id) ?? 0, p(id));
    check(sharedDraws, split.sharing.length * p(split.sharing[0]));
    // the draws spread over the sharing ids, not onto one
    expect(new Set([...counts.keys()].filter((t) => split.index[t] === split.ids.length - 1)).size).to.be.above(100);
    const a = sampleCompact(z, split, { temperature: 0.7, topP: 0.9 }, new Rng(3));
    const b = sampleToken(full, { temperature: 0.7, topP: 0.9 }, new Rng(3));
    expect(a).to.deep.equal(b);
  });
});
