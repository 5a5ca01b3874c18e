/**
 * An independent float64 reference of TinyLM's forward pass, in plain loops (no tfjs), written
 * from the architecture's definition (nanoGPT's shape, as documented in src/models/tinylm.ts):
 *   x = tok_emb[token] + pos_emb[position]
 *   per block: x += proj(attention(LN1(x))); x += out(GELU(fc(LN2(x))))
 *   attention: per head of width hd = d / H, softmax(q·kᵀ / sqrt(hd)) over keys s <= t, times v;
 *              heads are the consecutive hd-wide slices of the q, k, v projections
 *   LN: (x - mean) / sqrt(biased variance + 1e-5) * g + b;  GELU: exact, x·Φ(x) = x(1 + erf(x/√2))/2
 *   logits = LN_f(x) · head.w + head.b (untied from tok_emb)
 * Weights are given as flat row-major arrays; a matrix named `w` of shape [in, out] maps x to x·w.
 */
export interface RefConfig {
  vocabSize: number;
  dModel: number;
  nHeads: number;
  nLayers: number;
}

type W = Record<string, number[]>;

/** x [in] · w [in, out] + b [out]. */
function affine(x: number[], w: number[], b: number[]): number[] {
  const out = b.slice();
  for (let i = 0; i < x.length; i++) for (let j = 0; j < out.length; j++) out[j] += x[i] * w[i * out.length + j];
  return out;
}

function layerNorm(x: number[], g: number[], b: number[]): number[] {
  const mean = x.reduce((s, v) => s + v, 0) / x.length;
  const variance = x.reduce((s, v) => s + (v - mean) ** 2, 0) / x.length;
  return x.map((v, i) => ((v - mean) / Math.sqrt(variance + 1e-5)) * g[i] + b[i]);
}

/** erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7). */
function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const y = 1 - poly * Math.exp(-x * x);
  return x >= 0 ? y : -y;
}

const gelu = (x: number) => 0.5 * x * (1 + erf(x / Math.SQRT2));

/** Logits [T][V] of one unpadded sequence whose first token sits at position 0. */
export function referenceLogits(c: RefConfig, w: W, tokens: number[]): number[][] {
  const d = c.dModel;
  const hd = d / c.nHeads;
  const row = (table: number[], r: number) => table.slice(r * d, (r + 1) * d);
  let xs = tokens.map((tok, t) => row(w.tok_emb, tok).map((v, i) => v + row(w.pos_emb, t)[i]));
  for (let l = 0; l < c.nLayers; l++) {
    const p = (n: string) => w[`h${l}.${n}`];
    const normed = xs.map((x) => layerNorm(x, p('ln1.g'), p('ln1.b')));
    const q = normed.map((x) => affine(x, p('q.w'), p('q.b')));
    const k = normed.map((x) => affine(x, p('k.w'), p('k.b')));
    const v = normed.map((x) => affine(x, p('v.w'), p('v.b')));
    const y = xs.map(() => new Array<number>(d).fill(0));
    for (let h = 0; h < c.nHeads; h++) {
      const cols = Array.from({ length: hd }, (_, j) => h * hd + j);
      for (let t = 0; t < xs.length; t++) {
        const scores = Array.from(
          { length: t + 1 },
          (_, s) => cols.reduce((acc, j) => acc + q[t][j] * k[s][j], 0) / Math.sqrt(hd),
        );
        const max = Math.max(...scores);
        const e = scores.map((z) => Math.exp(z - max));
        const total = e.reduce((a, b) => a + b, 0);
        for (let s = 0; s <= t; s++) for (const j of cols) y[t][j] += (e[s] / total) * v[s][j];
      }
    }
    xs = xs.map((x, t) => affine(y[t], p('proj.w'), p('proj.b')).map((a, i) => x[i] + a));
    xs = xs.map((x) => {
      const hidden = affine(layerNorm(x, p('ln2.g'), p('ln2.b')), p('fc.w'), p('fc.b')).map(gelu);
      return affine(hidden, p('out.w'), p('out.b')).map((a, i) => x[i] + a);
    });
  }
  return xs.map((x) => affine(layerNorm(x, w['ln_f.g'], w['ln_f.b']), w['head.w'], w['head.b']));
}
