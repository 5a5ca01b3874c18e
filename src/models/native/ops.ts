import type { Sgemm } from '../../backend/native/library.js';
import { fillRows } from '../../backend/native/matmul.js';
import type { SimdKernels } from '../../backend/simd/index.js';

// TinyLM's native passes: library products and SIMD loops over float32 arrays that live in
// one WebAssembly.Memory (the SIMD kernels take byte offsets into it), plain loops elsewhere.

const EPS = 1e-5; // PyTorch's nn.LayerNorm, as TinyLM

/** PyTorch's LayerNorm over rows of width d (epsilon 1e-5, biased variance), in plain loops. */
export function layerNormRows(
  x: Float32Array,
  out: Float32Array,
  rows: number,
  d: number,
  g: Float32Array,
  b: Float32Array,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mean = 0;
    for (let j = 0; j < d; j++) mean += x[o + j];
    mean /= d;
    let v = 0;
    for (let j = 0; j < d; j++) {
      const c = x[o + j] - mean;
      v += c * c;
    }
    const inv = 1 / Math.sqrt(v / d + EPS);
    for (let j = 0; j < d; j++) out[o + j] = (x[o + j] - mean) * inv * g[j] + b[j];
  }
}

/**
 * LayerNorm's gradient in plain loops, as the SIMD kernel: with x̂ = (x - mean) / std and
 * dx̂ = dy g, dx = (dx̂ - mean(dx̂) - x̂ mean(dx̂ x̂)) / std, dg = Σ dy x̂, db = Σ dy over rows
 * (all three overwritten).
 */
function layerNormGradRows(
  dy: Float32Array,
  x: Float32Array,
  g: Float32Array,
  dx: Float32Array,
  dg: Float32Array,
  db: Float32Array,
  rows: number,
  d: number,
): void {
  dg.fill(0);
  db.fill(0);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mean = 0,
      v = 0,
      sum = 0,
      dot = 0;
    for (let j = 0; j < d; j++) mean += x[o + j];
    mean /= d;
    for (let j = 0; j < d; j++) {
      const c = x[o + j] - mean;
      v += c * c;
    }
    const inv = 1 / Math.sqrt(v / d + EPS);
    for (let j = 0; j < d; j++) {
      const xh = (x[o + j] - mean) * inv,
        gd = dy[o + j] * g[j];
      sum += gd;
      dot += gd * xh;
      dg[j] += dy[o + j] * xh;
      db[j] += dy[o + j];
    }
    sum /= d;
    dot /= d;
    for (let j = 0; j < d; j++) dx[o + j] = (dy[o + j] * g[j] - sum - (x[o + j] - mean) * inv * dot) * inv;
  }
}

/** out [rows, n] = x [rows, k] @ w [k, n] + b, the bias filling out first. */
export function affine(
  sgemm: Sgemm,
  x: Float32Array,
  rows: number,
  k: number,
  n: number,
  w: Float32Array,
  b: Float32Array,
  out: Float32Array,
): void {
  fillRows(out.subarray(0, rows * n), b);
  sgemm(false, false, rows, n, k, x, k, w, n, 1, out, n);
}

/** The loops of a pass, on the SIMD kernels of the memory its arrays live in (LayerNorm's need a width that is a multiple of 4). */
export class PassOps {
  constructor(
    readonly sgemm: Sgemm,
    private readonly k: SimdKernels,
  ) {}

  layerNorm(x: Float32Array, g: Float32Array, b: Float32Array, y: Float32Array, rows: number, d: number): void {
    if (d % 4 === 0) this.k.layerNorm(x.byteOffset, g.byteOffset, b.byteOffset, y.byteOffset, rows, d, EPS);
    else layerNormRows(x, y, rows, d, g, b);
  }

  /** dx, dg and db overwritten. */
  layerNormGrad(
    dy: Float32Array,
    x: Float32Array,
    g: Float32Array,
    dx: Float32Array,
    dg: Float32Array,
    db: Float32Array,
    rows: number,
    d: number,
  ): void {
    if (d % 4 === 0)
      this.k.layerNormGrad(
        dy.byteOffset,
        x.byteOffset,
        g.byteOffset,
        dx.byteOffset,
        dg.byteOffset,
        db.byteOffset,
        rows,
        d,
        EPS,
        7,
      );
    else layerNormGradRows(dy, x, g, dx, dg, db, rows, d);
  }

  /** y = h Φ(h), exact GELU, keeping its derivative Φ(h) + h φ(h) in `slope` for the backward pass. */
  gelu(h: Float32Array, y: Float32Array, slope: Float32Array): void {
    this.k.geluSlope(h.byteOffset, y.byteOffset, slope.byteOffset, h.length);
  }

  /** dh = dy slope, GELU's backward from the kept slope; dh may be dy. */
  geluGrad(dy: Float32Array, slope: Float32Array, dh: Float32Array): void {
    this.k.mul(dy.byteOffset, slope.byteOffset, dh.byteOffset, dy.length);
  }

  /** Row t of the n x n block `p` becomes the softmax of its first t + 1 entries, 0 beyond. */
  causalSoftmax(p: Float32Array, n: number): void {
    this.k.causalSoftmax(p.byteOffset, n);
  }

  /** Row by row, dp = p (dp - Σ dp p): the gradient of the scores given that of causalSoftmax's output. */
  causalSoftmaxGrad(p: Float32Array, dp: Float32Array, n: number): void {
    this.k.causalSoftmaxGrad(p.byteOffset, dp.byteOffset, n);
  }

  /** y = a + b over a's length; y may be a or b. */
  add(a: Float32Array, b: Float32Array, y: Float32Array): void {
    this.k.add(a.byteOffset, b.byteOffset, y.byteOffset, a.length);
  }

  affine(
    x: Float32Array,
    rows: number,
    k: number,
    n: number,
    w: Float32Array,
    b: Float32Array,
    out: Float32Array,
  ): void {
    affine(this.sgemm, x, rows, k, n, w, b, out);
  }

  /**
   * The gradients of out = x @ w + b given dout [rows, n]: dw = xᵀ dout, db = the column sums
   * of dout (a product with a row of ones: one call instead of a loop), and when `dx` is
   * given dx = dout wᵀ, or dx += dout wᵀ with `addToDx`.
   */
  affineGrad(
    x: Float32Array,
    dout: Float32Array,
    rows: number,
    k: number,
    n: number,
    w: Float32Array,
    dw: Float32Array,
    db: Float32Array,
    ones: Float32Array,
    dx?: Float32Array,
    addToDx = false,
  ): void {
    this.sgemm(true, false, k, n, rows, x, k, dout, n, 0, dw, n);
    this.sgemm(false, false, 1, n, rows, ones, rows, dout, n, 0, db, n);
    if (dx) this.sgemm(false, true, rows, k, n, dout, n, w, n, addToDx ? 1 : 0, dx, k);
  }
}
