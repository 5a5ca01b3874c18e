import type { Sgemm } from '../../backend/native/library.js';
import type { TinyLMConfig } from '../tinylm-config.js';
import { attend, attendBackward, type AttentionShape } from './attention.js';
import { PassMemory } from './memory.js';
import { PassOps } from './ops.js';
import type { ScoreBatch } from '../score-batch.js';
import { logitsBackward, logitsForward } from './logits.js';

type Views = Record<string, Float32Array>;

/**
 * TinyLM scoring on plain arrays, forward and backward: per completion token the log-prob
 * of its target, the entropy of its distribution and the value head's estimate, and every
 * weight's gradient given the gradients of those three. Same maths as `TinyLM.score`
 * (checked against tfjs's autodiff to 1e-4 by the tests). A tfjs train step of the
 * reference model is some 500 kernel calls; this is one library product per dense layer
 * and direction, two per attention head and row, and SIMD loops for the rest, all on one
 * WebAssembly.Memory (see PassMemory). One instance is one forward pass and at most one
 * backward pass; `release` frees its memory (done by backward, or by the caller).
 */
export class NativeScore {
  private readonly v: Views;
  private readonly memory: PassMemory;
  private readonly ops: PassOps;
  private readonly shape: AttentionShape;
  private readonly scale: number;
  private done = false;

  constructor(
    private readonly c: TinyLMConfig,
    weights: Record<string, Float32Array>,
    sgemm: Sgemm,
    private readonly batch: ScoreBatch,
    private readonly temperature: number,
    withBackward: boolean,
  ) {
    const { B, L, Tc } = batch;
    const { dModel: d, nHeads: H, nLayers, vocabSize: V } = c;
    const R = B * L,
      N = B * Tc;
    const sizes: Record<string, number> = { xf: N * d, hidden: N * d, logp: N * V, p: N * V, out: 3 * N };
    for (const [name, w] of Object.entries(weights)) sizes[`w:${name}`] = w.length;
    for (let i = 0; i <= nLayers; i++) sizes[`x${i}`] = R * d;
    for (let i = 0; i < nLayers; i++) {
      for (const a of ['n1', 'q', 'k', 'v', 'y', 'mid', 'n2']) sizes[a + i] = R * d;
      sizes[`pre${i}`] = sizes[`act${i}`] = sizes[`slope${i}`] = R * 4 * d;
      sizes[`probs${i}`] = B * H * L * L;
    }
    if (withBackward) {
      for (const [name, w] of Object.entries(weights)) sizes[`g:${name}`] = w.length;
      Object.assign(sizes, { dz: N * V, dHidden: N * d, dxf: N * d, dh: R * 4 * d, dp: L * L, ones: Math.max(R, N) });
      for (const a of ['dx', 'tmp', 'dn', 'dy', 'dq', 'dk', 'dv']) sizes[a] = R * d;
    }
    const { memory, views } = PassMemory.arrays(sizes);
    this.memory = memory;
    this.v = views;
    this.ops = new PassOps(sgemm, memory.kernels);
    for (const [name, w] of Object.entries(weights)) views[`w:${name}`].set(w);
    this.shape = { B, L, d, H, leftPad: batch.leftPad };
    this.scale = 1 / Math.sqrt(d / H);
  }

  private w(name: string): Float32Array {
    return this.v[`w:${name}`];
  }

  /** Channels [logProbs · mask, entropy, values?] each [B, Tc], in one array (a view: copy it before `release`). */
  forward(): Float32Array {
    const { B, L, Tc, P, tokens, positions } = this.batch;
    const { dModel: d, nLayers } = this.c;
    const R = B * L,
      v = this.v,
      ops = this.ops;
    const x0 = v.x0,
      tok = this.w('tok_emb'),
      pos = this.w('pos_emb');
    for (let r = 0; r < R; r++) {
      const t = tokens[r] * d,
        p = positions[r] * d,
        o = r * d;
      for (let j = 0; j < d; j++) x0[o + j] = tok[t + j] + pos[p + j];
    }
    for (let i = 0; i < nLayers; i++) {
      const n = `h${i}.`,
        x = v[`x${i}`],
        n1 = v[`n1${i}`],
        y = v[`y${i}`],
        mid = v[`mid${i}`],
        n2 = v[`n2${i}`];
      ops.layerNorm(x, this.w(n + 'ln1.g'), this.w(n + 'ln1.b'), n1, R, d);
      for (const a of ['q', 'k', 'v']) ops.affine(n1, R, d, d, this.w(`${n}${a}.w`), this.w(`${n}${a}.b`), v[a + i]);
      y.fill(0); // padding rows: no keys to attend to, and finite for the products that read them
      attend(ops, this.shape, this.scale, v[`q${i}`], v[`k${i}`], v[`v${i}`], y, v[`probs${i}`]);
      ops.affine(y, R, d, d, this.w(n + 'proj.w'), this.w(n + 'proj.b'), mid);
      ops.add(mid, x, mid);
      ops.layerNorm(mid, this.w(n + 'ln2.g'), this.w(n + 'ln2.b'), n2, R, d);
      ops.affine(n2, R, d, 4 * d, this.w(n + 'fc.w'), this.w(n + 'fc.b'), v[`pre${i}`]);
      ops.gelu(v[`pre${i}`], v[`act${i}`], v[`slope${i}`]);
      const next = v[`x${i + 1}`];
      ops.affine(v[`act${i}`], R, 4 * d, d, this.w(n + 'out.w'), this.w(n + 'out.b'), next);
      ops.add(next, mid, next);
    }
    // only the positions that predict completion tokens go on: [B * Tc, d]
    const last = v[`x${nLayers}`],
      N = B * Tc;
    for (let b = 0; b < B; b++) v.xf.set(last.subarray((b * L + P - 1) * d, (b * L + P - 1 + Tc) * d), b * Tc * d);
    ops.layerNorm(v.xf, this.w('ln_f.g'), this.w('ln_f.b'), v.hidden, N, d);
    logitsForward(ops, this.c, (name) => this.w(name), v, this.batch, this.temperature);
    return v.out.subarray(0, (this.c.valueHead ? 3 : 2) * N);
  }

  /** Every weight's gradient given dOut, the gradient of `forward`'s output (same layout); copies, and the pass's memory is released. */
  backward(dOut: Float32Array): Record<string, Float32Array> {
    if (this.done || !this.v.dx) throw new Error('native score: backward needs a forward pass made for it, once');
    const { B, L, Tc, P, tokens, positions } = this.batch;
    const { dModel: d, nLayers } = this.c;
    const R = B * L,
      N = B * Tc,
      v = this.v,
      ops = this.ops;
    const g = (name: string) => v[`g:${name}`];
    const affineGrad = (
      x: Float32Array,
      dout: Float32Array,
      rows: number,
      k: number,
      n: number,
      name: string,
      dx: Float32Array,
      add = false,
    ) => ops.affineGrad(x, dout, rows, k, n, this.w(name + '.w'), g(name + '.w'), g(name + '.b'), v.ones, dx, add);
    v.ones.fill(1);
    for (const name of ['tok_emb', 'pos_emb', 'value.w', 'value.b']) g(name)?.fill(0);
    logitsBackward(ops, this.c, (name) => this.w(name), g, v, this.batch, this.temperature, dOut);
    ops.layerNormGrad(v.dHidden, v.xf, this.w('ln_f.g'), v.dxf, g('ln_f.g'), g('ln_f.b'), N, d);
    const dx = v.dx;
    dx.fill(0);
    for (let b = 0; b < B; b++) dx.set(v.dxf.subarray(b * Tc * d, (b + 1) * Tc * d), (b * L + P - 1) * d);
    for (let i = nLayers - 1; i >= 0; i--) {
      const n = `h${i}.`;
      affineGrad(v[`act${i}`], dx, R, 4 * d, d, n + 'out', v.dh);
      ops.geluGrad(v.dh, v[`slope${i}`], v.dh);
      affineGrad(v[`n2${i}`], v.dh, R, d, 4 * d, n + 'fc', v.dn);
      ops.layerNormGrad(v.dn, v[`mid${i}`], this.w(n + 'ln2.g'), v.tmp, g(n + 'ln2.g'), g(n + 'ln2.b'), R, d);
      ops.add(dx, v.tmp, dx); // the gradient of mid
      affineGrad(v[`y${i}`], dx, R, d, d, n + 'proj', v.dy);
      for (const a of [v.dq, v.dk, v.dv]) a.fill(0);
      attendBackward(
        ops,
        this.shape,
        this.scale,
        v[`q${i}`],
        v[`k${i}`],
        v[`v${i}`],
        v[`probs${i}`],
        v.dy,
        v.dq,
        v.dk,
        v.dv,
        v.dp,
      );
      affineGrad(v[`n1${i}`], v.dq, R, d, d, n + 'q', v.dn);
      affineGrad(v[`n1${i}`], v.dk, R, d, d, n + 'k', v.dn, true);
      affineGrad(v[`n1${i}`], v.dv, R, d, d, n + 'v', v.dn, true);
      ops.layerNormGrad(v.dn, v[`x${i}`], this.w(n + 'ln1.g'), v.tmp, g(n + 'ln1.g'), g(n + 'ln1.b'), R, d);
      ops.add(dx, v.tmp, dx); // the gradient of the layer's input
    }
    const tok = g('tok_emb'),
      pos = g('pos_emb');
    for (let r = 0; r < R; r++) {
      const tk = tokens[r] * d,
        p = positions[r] * d,
        o = r * d;
      for (let j = 0; j < d; j++) {
        tok[tk + j] += dx[o + j];
        pos[p + j] += dx[o + j];
      }
    }
    const grads = Object.fromEntries(
      Object.keys(v)
        .filter((k) => k.startsWith('g:'))
        .map((k) => [k.slice(2), v[k].slice()]),
    );
    this.release();
    return grads;
  }

  /** Frees the pass's memory: after this neither pass may run. */
  release(): void {
    this.done = true;
    this.memory.release();
  }
}
