import type { PolicyInput } from './types.js';

/**
 * A scoring batch laid out as TinyLM.completionLogits lays it out: prompts left-padded to a
 * common length P, completion token j predicted at position P - 1 + j, L = P + Tc - 1
 * positions per row (token 0 fills the right end of short rows), targets and mask [B, Tc].
 */
export interface ScoreBatch {
  B: number;
  P: number;
  Tc: number;
  L: number;
  tokens: Int32Array; // [B, L]
  positions: Int32Array; // [B, L], counted from each row's first real token
  leftPad: number[];
  targets: Int32Array; // [B, Tc]
  mask: Float32Array; // [B, Tc]
}

/** Lays out `inputs` (the caller has checked them: TinyLM's checkInputs), for the tfjs and the native passes alike. */
export function layoutBatch(inputs: readonly PolicyInput[]): ScoreBatch {
  const B = inputs.length;
  const P = Math.max(...inputs.map((r) => r.prompt.length));
  const Tc = Math.max(1, ...inputs.map((r) => r.completion.length));
  const L = P + Tc - 1;
  const tokens = new Int32Array(B * L),
    positions = new Int32Array(B * L);
  const targets = new Int32Array(B * Tc),
    mask = new Float32Array(B * Tc);
  const leftPad = inputs.map((r) => P - r.prompt.length);
  inputs.forEach((r, b) => {
    const row = [...r.prompt, ...r.completion].slice(0, L - leftPad[b]);
    tokens.set(row, b * L + leftPad[b]);
    for (let t = 0; t < L; t++) positions[b * L + t] = Math.max(0, t - leftPad[b]);
    targets.set(r.completion, b * Tc);
    mask.fill(1, b * Tc, b * Tc + r.completion.length);
  });
  return { B, P, Tc, L, tokens, positions, leftPad, targets, mask };
}
