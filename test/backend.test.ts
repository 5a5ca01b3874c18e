import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { createRequire } from 'node:module';
import { BACKEND_CHOICES, describeBackend, initBackend, type BackendChoice } from '../src/backend/index.js';
import { TinyLM, type TinyLMConfig } from '../src/models/tinylm.js';
import { loadNative } from '../src/backend/native/library.js';

const small: TinyLMConfig = { vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 32, seed: 11 };

/** Whether an optional native package can be found from here (initBackend imports it by the same name). */
function installed(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}
const native = { gpu: installed('@tensorflow/tfjs-node-gpu'), node: installed('@tensorflow/tfjs-node') };

/** Awaits `p` and returns the error it rejected with; fails if it resolved. */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** Selects `choice` and checks that TensorFlow.js really runs on it. */
async function use(choice: 'cpu' | 'wasm'): Promise<void> {
  const info = await initBackend(choice);
  expect(info.chosen).to.equal(choice);
  expect(tf.getBackend(), `initBackend('${choice}') left tf on another backend`).to.equal(choice);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** d/dx of sum(w * gather(x, indices, axis)), as plain numbers. */
function gatherGrad(x: number[][], indices: number[] | number[][], axis: number, weights: number[]): number[] {
  return tf.tidy(() => {
    const xt = tf.tensor2d(x);
    const idx = tf.tensor(indices, undefined, 'int32');
    const g = tf.grad((p: tf.Tensor) => {
      const out = tf.gather(p, idx, axis);
      return out.mul(tf.tensor(weights, out.shape)).sum();
    })(xt);
    expect(g.shape).to.deep.equal(xt.shape);
    return Array.from(g.dataSync());
  });
}

describe('backend/initBackend', () => {
  after(async () => {
    await initBackend('cpu');
  });

  it("'cpu' loads cpu and adds no kernels; accelerate 'off' keeps tfjs's products and says so", async () => {
    const info = await initBackend('cpu', 'off');
    expect(info).to.deep.equal({
      requested: 'cpu',
      chosen: 'cpu',
      tfName: 'cpu',
      addedKernels: [],
      skipped: {},
      accelerate: 'off',
      native: undefined,
      nativeWhy: undefined,
      fused: false,
    });
    expect(tf.getBackend()).to.equal('cpu');
    expect(describeBackend(info)).to.equal("backend: cpu (tfjs 'cpu'); accelerate off");
  });

  it("'auto' acceleration names the native library serving products, or says why none does", async () => {
    const info = await initBackend('cpu', 'auto');
    const lib = loadNative();
    expect(info.native).to.equal(lib?.name);
    expect(info.fused).to.equal(true);
    if (lib)
      expect(describeBackend(info)).to.equal(
        `backend: cpu + fused kernels + native sgemm (${lib.name}) + native TinyLM passes (tfjs 'cpu')`,
      );
    else
      expect(describeBackend(info)).to.match(
        /^backend: cpu \+ fused kernels \(tfjs 'cpu'\); no native products: .*libopenblas0-pthread/,
      );
  });

  it("'wasm' loads wasm and provides the UnsortedSegmentSum kernel wasm lacks", async () => {
    const info = await initBackend('wasm');
    expect(info.requested).to.equal('wasm');
    expect(info.chosen).to.equal('wasm');
    expect(info.tfName).to.equal('wasm');
    expect(info.skipped).to.deep.equal({});
    expect(tf.getBackend()).to.equal('wasm');
    expect(tf.getKernel('UnsortedSegmentSum', 'wasm'), 'kernel registered for wasm').to.not.equal(undefined);
  });

  it("reports the added UnsortedSegmentSum kernel every time 'wasm' is selected, not only the first", async () => {
    // The JS kernel is in use whenever wasm runs, so every BackendInfo for wasm should say so
    // (and describeBackend should log it), however often the process switched backends.
    await initBackend('wasm');
    await initBackend('cpu');
    const again = await initBackend('wasm');
    expect(tf.getBackend()).to.equal('wasm');
    expect(again.addedKernels).to.deep.equal(['UnsortedSegmentSum']);
    expect(describeBackend(again)).to.contain('added kernels UnsortedSegmentSum');
  });

  it("'auto' takes the first of gpu, node, wasm that is installed and records why it skipped the others", async () => {
    // Works with or without the optional native packages: the expectation follows what is installed.
    await initBackend('cpu'); // make sure 'auto' is resolved afresh
    const info = await initBackend('auto');
    const chosen = native.gpu ? 'gpu' : native.node ? 'node' : 'wasm';
    const skipped = (['gpu', 'node'] as const).slice(0, ['gpu', 'node', 'wasm'].indexOf(chosen));
    expect(info.requested).to.equal('auto');
    expect(info.chosen).to.equal(chosen);
    expect(info.tfName).to.equal(chosen === 'wasm' ? 'wasm' : 'tensorflow');
    expect(tf.getBackend()).to.equal(info.tfName);
    expect(Object.keys(info.skipped)).to.deep.equal(skipped);
    if (skipped.includes('gpu')) expect(info.skipped.gpu).to.contain('@tensorflow/tfjs-node-gpu');
    if (skipped.includes('node')) {
      expect(info.skipped.node).to.contain('@tensorflow/tfjs-node');
      expect(info.skipped.node).to.not.contain('tfjs-node-gpu');
    }
    const tail = skipped.length ? `; skipped ${skipped.join(', ')}` : '';
    const accelerated =
      (info.fused ? ' + fused kernels' : '') +
      (info.native ? ` + native sgemm (${info.native}) + native TinyLM passes` : '');
    expect(
      describeBackend(info).startsWith(`backend: ${chosen}${accelerated} (tfjs '${info.tfName}')${tail}`),
      describeBackend(info),
    ).to.equal(true);
  });

  it('asking again for the same choice returns the cached answer', async () => {
    const a = await initBackend('cpu');
    const b = await initBackend('cpu');
    expect(b).to.equal(a);
  });

  it('re-selects the backend when asked again after something else switched tf away', async () => {
    // Other code (e.g. tests calling tf.setBackend) can switch backends behind initBackend's
    // back; asking for 'wasm' must still leave tf running wasm, not a stale cached answer.
    try {
      await initBackend('wasm');
      await tf.setBackend('cpu');
      const info = await initBackend('wasm');
      expect(info.chosen).to.equal('wasm');
      expect(tf.getBackend(), "initBackend('wasm') returned wasm info while tf runs another backend").to.equal('wasm');
    } finally {
      await initBackend('cpu'); // leaves initBackend's cache and tf in agreement whatever happened
    }
  });

  it('an unknown choice throws naming the known ones', async () => {
    const err = await rejection(initBackend('tpu' as BackendChoice));
    expect(err.message).to.contain("'tpu'");
    for (const known of BACKEND_CHOICES) expect(err.message).to.contain(known);
    expect(err.message).to.contain('auto, gpu, node, wasm, cpu');
  });

  it("an explicit 'node' or 'gpu' that cannot load throws naming it and leaves the backend alone", async function () {
    const missing = (['node', 'gpu'] as const).filter((c) => !native[c]);
    if (missing.length === 0) this.skip(); // both native packages are installed: nothing here fails to load
    for (const choice of missing) {
      await use('cpu');
      const err = await rejection(initBackend(choice));
      const pkg = choice === 'gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
      expect(err.message).to.match(new RegExp(`backend '${choice}' could not be loaded \\(${choice}: .*${pkg}`));
      expect(tf.getBackend()).to.equal('cpu');
    }
  });

  describe('UnsortedSegmentSum on wasm (the gradient of tf.gather)', () => {
    const x = [
      [0.5, -1, 2],
      [3, 0.25, -0.75],
      [1.5, 1, -2],
      [-0.5, 4, 0.125],
      [2, -3, 1],
    ];
    // Repeated indices (0 twice, 2 three times) must accumulate; rows 1 and 3 get no gradient.
    const rowIdx = [0, 2, 2, 4, 0, 2];
    const rowW = Array.from({ length: rowIdx.length * 3 }, (_, i) => ((i * 7) % 11) / 4 - 1.2);
    const colIdx = [
      [2, 0],
      [2, 2],
    ];
    const colW = Array.from({ length: 5 * 4 }, (_, i) => ((i * 5) % 13) / 3 - 2);

    /** The expected row gradient, by hand: sum of the weight rows that gathered each x row. */
    function handRowGrad(): number[] {
      const g = new Array(15).fill(0);
      rowIdx.forEach((r, i) => {
        for (let j = 0; j < 3; j++) g[r * 3 + j] += rowW[i * 3 + j];
      });
      return g;
    }

    let cpuRow: number[];
    let cpuCol: number[];
    let cpuSeg: number[];
    const segX = [
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
      [9, 10],
    ];
    const segIds = [2, -1, 0, 2, 3]; // -1 and 3 fall outside [0, 3) and are dropped
    const segSum = () =>
      tf.tidy(() => Array.from(tf.unsortedSegmentSum(tf.tensor2d(segX), tf.tensor1d(segIds, 'int32'), 3).dataSync()));

    before(async () => {
      await use('cpu');
      cpuRow = gatherGrad(x, rowIdx, 0, rowW);
      cpuCol = gatherGrad(x, colIdx, 1, colW);
      cpuSeg = segSum();
      await use('wasm');
    });
    after(async () => {
      await initBackend('cpu');
    });

    it('the cpu reference matches the hand computation', () => {
      expect(maxAbsDiff(cpuRow, handRowGrad())).to.be.below(1e-6);
      expect(cpuSeg).to.deep.equal([5, 6, 0, 0, 8, 10]);
    });

    it('gather along axis 0 with repeated indices: wasm gradient equals cpu', () => {
      expect(tf.getBackend()).to.equal('wasm');
      const g = gatherGrad(x, rowIdx, 0, rowW);
      expect(maxAbsDiff(g, cpuRow)).to.be.below(1e-6);
      expect(g.slice(3, 6)).to.deep.equal([0, 0, 0]);
      expect(g.slice(9, 12)).to.deep.equal([0, 0, 0]);
    });

    it('gather along axis 1 with 2-D repeated indices: wasm gradient equals cpu', () => {
      expect(tf.getBackend()).to.equal('wasm');
      expect(maxAbsDiff(gatherGrad(x, colIdx, 1, colW), cpuCol)).to.be.below(1e-6);
    });

    it('drops segment ids outside [0, numSegments), as cpu does', () => {
      expect(tf.getBackend()).to.equal('wasm');
      expect(segSum()).to.deep.equal(cpuSeg);
    });

    it('an embedding gradient through gather is finite and leaks nothing', () => {
      const table = tf.randomNormal([10, 4], 0, 1, 'float32', 3);
      const ids = tf.tensor1d([1, 1, 7], 'int32');
      // Counted around the call itself, with no tidy to hide what is left; the backend's own count
      // also sees buffers a kernel writes and never returns, which tf.memory() does not.
      const before = { tensors: tf.memory().numTensors, buffers: tf.backend().numDataIds() };
      const g = tf.grad((t: tf.Tensor) => tf.gather(t, ids).square().sum())(table);
      const norm = Array.from(g.dataSync()).reduce((s, x) => s + Math.abs(x), 0);
      g.dispose();
      // guards against: the UnsortedSegmentSum kernel leaving a tensor or a backend buffer behind
      expect(tf.memory().numTensors, 'tensors').to.equal(before.tensors);
      expect(tf.backend().numDataIds(), 'backend buffers').to.equal(before.buffers);
      tf.dispose([table, ids]);
      expect(Number.isFinite(norm) && norm > 0).to.equal(true);
    });
  });

  describe('TinyLM on cpu and wasm', () => {
    // Row 0 is left-padded by 3, so masking and position offsets are compared too.
    const tokens = [
      [0, 0, 0, 1, 5, 9, 12, 3],
      [1, 4, 7, 19, 2, 8, 8, 6],
    ];
    const leftPad = [3, 0];
    const inputs = [
      { prompt: [1, 5, 9], completion: [12, 3, 7] },
      { prompt: [1, 4, 7, 19, 2], completion: [8] },
    ];

    function run(): { logits: number[]; logProbs: number[]; grad: number[] } {
      const model = new TinyLM(small);
      try {
        return tf.tidy(() => {
          const { hidden } = model.forward(tf.tensor2d(tokens, undefined, 'int32'), leftPad);
          const logits = Array.from(model.logits(hidden).dataSync());
          const logProbs = Array.from(model.score(inputs).logProbs.dataSync());
          const { grads } = tf.variableGrads(() => model.score(inputs).logProbs.sum() as tf.Scalar, model.variables());
          const grad = Array.from(grads[model.weights['h0.q.w'].name].dataSync());
          return { logits, logProbs, grad };
        });
      } finally {
        model.dispose();
      }
    }

    let cpu: ReturnType<typeof run>;
    before(async () => {
      await use('cpu');
      cpu = run();
      await use('wasm');
    });
    after(async () => {
      await initBackend('cpu');
    });

    it('forward logits agree to 1e-4 (weights are initialised on the host)', () => {
      expect(tf.getBackend()).to.equal('wasm');
      const wasm = run();
      expect(wasm.logits).to.have.length(2 * 8 * 20);
      expect(maxAbsDiff(wasm.logits, cpu.logits)).to.be.below(1e-4);
      expect(maxAbsDiff(wasm.logProbs, cpu.logProbs)).to.be.below(1e-4);
    });

    it('gradients agree to 1e-4', () => {
      const wasm = run();
      const scale = Math.max(...cpu.grad.map(Math.abs));
      expect(scale).to.be.above(0);
      expect(maxAbsDiff(wasm.grad, cpu.grad) / scale).to.be.below(1e-4);
    });
  });
});
