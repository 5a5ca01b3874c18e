/**
 * An adapter merged into its base, as PEFT's `merge_and_unload` does: each adapted
 * projection's weight becomes W + scaling * (x -> x A B), held here as [in, out], so
 * W' = W + scaling * A B. The result is a plain model of the base's architecture, written with
 * writeHfDirectory as a Hugging Face directory transformers and vLLM load without PEFT.
 */
import * as tf from '@tensorflow/tfjs';
import { readRawConfig, writeHfDirectory } from './create.js';
import type { LoraAdapter } from './lora.js';
import { HfCausalLM } from './model.js';

/** A new model: `base` with `adapter` merged (the base itself is left as it is). */
export function mergeAdapter(base: HfCausalLM, adapter: LoraAdapter): HfCausalLM {
  const merged = new HfCausalLM(base.config, base.storedTensors(), base.dir);
  for (const m of Object.keys(adapter.a)) {
    const w = merged.weights[`${m}.weight`];
    tf.tidy(() => w.assign(w.add(tf.matMul(adapter.a[m], adapter.b[m]).mul(adapter.scaling))));
  }
  return merged;
}

/** Writes `base` with `adapter` merged to `dir` as a Hugging Face directory (config and tokenizer files from the base's directory). */
export function writeMerged(dir: string, base: HfCausalLM, adapter: LoraAdapter): void {
  if (!base.dir) throw new Error('merge: the base must have been loaded from a directory (its config.json and tokenizer files are copied)');
  const merged = mergeAdapter(base, adapter);
  try {
    // the weights are written in float32, whatever the base's were
    const raw = readRawConfig(base.dir);
    writeHfDirectory(dir, merged, { ...raw, dtype: 'float32', ...('torch_dtype' in raw ? { torch_dtype: 'float32' } : {}) }, base.dir);
  } finally {
    merged.dispose();
  }
}
