import { expect } from 'chai';
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { readHfConfig } from '../../src/models/hf/config.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { writeSafetensors } from '../../src/models/hf/safetensors.js';
import { readCheckpointTensors } from '../../src/models/hf/safetensors.js';
import { shareRows } from '../../src/models/hf/shared-rows.js';
import { generate } from '../../src/models/generate.js';
import { TEST_BACKEND } from '../needs.js';
import { maxDiff } from './hf-fixtures.js';
import { writeTinyHf } from './hf-tiny.js';

describe('tied rows a corpus never uses, trained as one', function () {
  this.timeout(60000);
  let root: string;
  before(async () => {
    await initBackend(TEST_BACKEND);
    root = mkdtempSync(join(tmpdir(), 'coevolve-shared-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('makes a fresh table share its unused rows, keeps a made one shared, and refuses a trained one', () => {
    const V = 6,
      d = 2;
    const fresh = Float32Array.from({ length: V * d }, (_, i) => i);
    const split = shareRows(fresh, V, d, new Set([1, 4]), true);
    expect([...split.ids]).to.deep.equal([1, 4, 0]);
    expect([...split.sharing]).to.deep.equal([0, 2, 3, 5]);
    expect([...split.index]).to.deep.equal([2, 0, 2, 2, 1, 2]);
    // every unused row now holds row 0's values; the used ones are untouched
    expect([...fresh]).to.deep.equal([0, 1, 2, 3, 0, 1, 0, 1, 8, 9, 0, 1]);
    // made that way, the table keeps its shared rows, less one a new corpus uses
    const again = shareRows(fresh, V, d, new Set([1, 3, 4]), false);
    expect([...again.ids]).to.deep.equal([1, 3, 4, 0]);
    expect([...again.sharing]).to.deep.equal([0, 2, 5]);
    // a trained table with no equal rows: its rows may be tokens an earlier stage taught
    const trained = Float32Array.from({ length: V * d }, (_, i) => i);
    expect(() => shareRows(trained, V, d, new Set([1]), false, 'init')).to.throw(/init: no rows are shared/);
    expect(() => shareRows(trained, V, d, new Set([9]), true)).to.throw(/token 9 is outside/);
  });

  it('gives the full head its log-probs, entropies and gradients: the shared row takes the sum of its copies', () => {
    const dir = writeTinyHf(join(root, 'tiny'), { seed: 3, tied: true });
    const load = () => new HfCausalLM(readHfConfig(dir), readCheckpointTensors(dir), dir);
    const compact = load(),
      full = load();
    const name = 'model.embed_tokens.weight';
    try {
      // the tokens of a small corpus: digits, '+', '=' and the end of turn
      const used = new Set([...'0123456789+='].map((c) => c.charCodeAt(0)).concat([258]));
      const split = compact.shareUnusedRows(used, true);
      expect(split.sharing.length).to.equal(259 - used.size);
      full.weights[name].assign(compact.weights[name]);
      const inputs = [
        { prompt: [49, 50, 43], completion: [51, 52, 258] },
        { prompt: [55, 43, 56, 61], completion: [49, 53, 258] },
      ];
      const a = tf.tensor2d([0.3, -1.2, 0.7, 1.1, 0.4, -0.5], [2, 3]);
      const objective = (m: HfCausalLM) => () => {
        const s = m.score(inputs, 0.8);
        return s.logProbs.mul(a).sum().add(s.entropy.mul(s.mask).mul(0.6).sum()) as tf.Scalar;
      };
      const mine = tf.variableGrads(objective(compact), compact.variables());
      const theirs = tf.variableGrads(objective(full), full.variables());
      expect(mine.value.dataSync()[0]).to.be.closeTo(theirs.value.dataSync()[0], 1e-4); // a float32 sum near 15
      // the compact table trains in the tied table's place: a row per used id, then the shared row
      const table = compact.variables().find((v) => !Object.values(compact.weights).includes(v))!;
      expect(table.shape).to.deep.equal([used.size + 1, compact.config.hidden]);
      // relative by norm, 1e-4, as the transformers comparisons (wasm's float32 sums differ from the native sgemm's)
      const rel = (a: ArrayLike<number>, b: ArrayLike<number>) => {
        let diff = 0,
          norm = 0;
        for (let i = 0; i < b.length; i++) [diff, norm] = [diff + (a[i] - b[i]) ** 2, norm + b[i] ** 2];
        return Math.sqrt(diff / (norm + 1e-30));
      };
      for (const [n, v] of Object.entries(full.weights)) {
        const g = theirs.grads[v.name].dataSync() as Float32Array;
        if (n !== name) {
          expect(rel(mine.grads[compact.weights[n].name].dataSync(), g), n).to.be.below(1e-4);
          continue;
        }
        const h = mine.grads[table.name].dataSync() as Float32Array;
        const d = compact.config.hidden;
        const own = new Float32Array((split.ids.length - 1) * d);
        split.ids.forEach((id, i) => i < split.ids.length - 1 && own.set(g.subarray(id * d, id * d + d), i * d));
        expect(rel(h.subarray(0, own.length), own), 'the own rows').to.be.below(1e-4);
        const summed = new Float32Array(d);
        for (const id of split.sharing) for (let j = 0; j < d; j++) summed[j] += g[id * d + j];
        expect(rel(h.subarray(used.size * d), summed), 'the shared row').to.be.below(1e-4);
      }
      // the clip's norm: the shared row's square weighed 1/N, the full model's norm
      const weights = compact.gradNormWeights()!;
      const norm = (grads: tf.NamedTensorMap, w: Record<string, tf.Tensor> = {}) =>
        Math.sqrt(
          Object.entries(grads).reduce(
            (acc, [k, g]) => acc + (w[k] ? g.square().mul(w[k]) : g.square()).sum().dataSync()[0],
            0,
          ),
        );
      expect(norm(mine.grads, weights)).to.be.closeTo(norm(theirs.grads), 1e-4 * norm(theirs.grads));
      expect(norm(mine.grads)).to.be.above(1.05 * norm(theirs.grads)); // unweighed, the shared row counts N times
      tf.dispose([mine.value, theirs.value, ...Object.values(mine.grads), ...Object.values(theirs.grads), a]);
    } finally {
      compact.dispose();
      full.dispose();
    }
  });

  it('copies the trained shared row over its copies before the table is read or saved', () => {
    const dir = writeTinyHf(join(root, 'spread'), { seed: 4, tied: true });
    const model = new HfCausalLM(readHfConfig(dir), readCheckpointTensors(dir), dir);
    const name = 'model.embed_tokens.weight';
    try {
      const split = model.shareUnusedRows(new Set([49, 50, 51, 258]), true);
      const d = model.config.hidden;
      const rep = split.ids[split.ids.length - 1];
      const copy = split.sharing[split.sharing.length - 1];
      // a training pass, then the compact table moves as an optimizer step would move it
      const { value, grads } = tf.variableGrads(
        () => model.score([{ prompt: [49, 50], completion: [51, 258] }]).logProbs.sum() as tf.Scalar,
        model.variables(),
      );
      const table = model.variables().find((v) => !Object.values(model.weights).includes(v))!;
      const moved = Float32Array.from(table.dataSync() as Float32Array);
      moved.fill(0.5, (split.ids.length - 1) * d);
      moved.fill(0.25, 0, d); // the first own row: token 49
      tf.tidy(() => table.assign(tf.tensor2d(moved, table.shape as [number, number])));
      const tied = model.weights[name];
      expect((tied.dataSync() as Float32Array)[copy * d]).to.not.equal(0.5);
      const stored = model.storedTensors()[name].data;
      expect([...stored.subarray(copy * d, copy * d + d)].every((x) => x === 0.5)).to.equal(true);
      expect([...stored.subarray(rep * d, rep * d + d)].every((x) => x === 0.5)).to.equal(true);
      expect([...stored.subarray(49 * d, 49 * d + d)].every((x) => x === 0.25)).to.equal(true);
      tf.dispose([value, ...Object.values(grads)]);
    } finally {
      model.dispose();
    }
  });

  it('a frozen base made so computes its head on the compact rows: the same logits, scores and adapter gradients, unused targets too', () => {
    const dir = writeTinyHf(join(root, 'made'), { seed: 5, tied: true });
    const made = new HfCausalLM(readHfConfig(dir), readCheckpointTensors(dir), dir);
    made.shareUnusedRows(new Set([...'0123456789+='].map((c) => c.charCodeAt(0)).concat([258])), true);
    writeSafetensors(join(dir, 'model.safetensors'), made.storedTensors());
    made.dispose();
    const compact = new HfCausalLM(readHfConfig(dir), readCheckpointTensors(dir), dir, { frozen: true });
    const full = new HfCausalLM(readHfConfig(dir), readCheckpointTensors(dir), dir);
    const lora = { r: 2, alpha: 4, targetModules: 'all-linear' as const };
    const adapters = [new LoraAdapter(compact.config, lora, 7), new LoraAdapter(full.config, lora, 7)];
    try {
      const hidden = tf.randomNormal([2, 3, compact.config.hidden], 0, 1, 'float32', 8) as tf.Tensor3D;
      expect(maxDiff(compact.logits(hidden).dataSync(), full.logits(hidden).dataSync())).to.be.below(1e-5);
      // 200 and 65 are targets no corpus example used: they read the shared row, less log n
      const inputs = [
        { prompt: [49, 50, 43], completion: [200, 52, 258] },
        { prompt: [55, 43, 56, 61], completion: [49, 65, 258] },
      ];
      const run = (m: HfCausalLM, adapter: LoraAdapter) =>
        tf.variableGrads(() => {
          const s = m.score(inputs, 0.8, adapter);
          return s.logProbs.sum().add(s.entropy.mul(s.mask).mul(0.3).sum()) as tf.Scalar;
        }, adapter.variables());
      const mine = run(compact, adapters[0]);
      const theirs = run(full, adapters[1]);
      expect(mine.value.dataSync()[0]).to.be.closeTo(theirs.value.dataSync()[0], 1e-4);
      const a = adapters[0].variables(),
        b = adapters[1].variables();
      a.forEach((v, i) =>
        expect(maxDiff(mine.grads[v.name].dataSync(), theirs.grads[b[i].name].dataSync()), v.name).to.be.below(1e-5),
      );
      tf.dispose([hidden, mine.value, theirs.value, ...Object.values(mine.grads), ...Object.values(theirs.grads)]);
      // generation samples the compact rows: greedy, the full head's tokens and statistics
      expect(compact.compactRows()).to.not.equal(undefined);
      const prompts = [
        [49, 50, 43],
        [55, 43, 56, 61, 57],
      ];
      const g = (m: HfCausalLM) => generate(m, prompts, { maxNewTokens: 5, temperature: 0 });
      const [x, y] = [g(compact), g(full)];
      expect(x.map((r) => r.tokens)).to.deep.equal(y.map((r) => r.tokens));
      for (const key of ['logProbs', 'entropy', 'selfCertainty'] as const)
        x.forEach((r, i) => expect(maxDiff(r[key], y[i][key]), key).to.be.below(1e-4));
    } finally {
      adapters.forEach((x) => x.dispose());
      compact.dispose();
      full.dispose();
    }
  });
});
