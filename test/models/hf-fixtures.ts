import { expect } from 'chai';
import type { StoredTensor } from '../../src/models/hf/safetensors.js';

/** The tiny checkpoints transformers wrote (test/fixtures/hf/README.md), one per supported family and config style. */
export const FIXTURES = ['llama-tied', 'llama3-scaled', 'qwen2', 'qwen3', 'gpt2'];
export const fixture = (name: string) => `test/fixtures/hf/${name}`;

/** The largest absolute difference between two arrays of one length. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).to.equal(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** The rows of an int tensor [R, C] as lists. */
export const rows = (t: StoredTensor) =>
  Array.from({ length: t.shape[0] }, (_, r) => Array.from(t.data.subarray(r * t.shape[1], (r + 1) * t.shape[1])));
