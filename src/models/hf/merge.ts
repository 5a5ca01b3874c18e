/**
 * An adapter merged into its base, as PEFT's `merge_and_unload` does: each adapted
 * projection's weight becomes W + scaling * (x -> x A B), held here as [in, out], so
 * W' = W + scaling * A B (stored as nn.Linear's [out, in], its transpose; GPT-2's Conv1D
 * stores [in, out] as held). The result is a plain model of the base's architecture, written
 * with writeHfDirectory as a Hugging Face directory transformers and vLLM load without PEFT.
 */
import * as tf from '@tensorflow/tfjs';
import { readRawConfig, writeHfDirectory } from './create.js';
import type { LoraAdapter } from './lora.js';
import { HfCausalLM, type StoredWeights } from './model.js';

/** The base's stored weights with `adapter` merged: the adapted ones are new arrays, the rest the base's own (read only). */
export function mergedTensors(base: HfCausalLM, adapter: LoraAdapter): StoredWeights {
  const stored = base.storedTensors();
  const conv1d = base.config.architecture === 'GPT2LMHeadModel';
  for (const m of Object.keys(adapter.a)) {
    const w = stored[`${m}.weight`];
    const delta = tf.tidy(() => {
      const held = tf.matMul(adapter.a[m], adapter.b[m]).mul(adapter.scaling); // [in, out]
      return (conv1d ? held : held.transpose()).dataSync() as Float32Array;
    });
    const data = Float32Array.from(w.data);
    for (let i = 0; i < data.length; i++) data[i] += delta[i];
    stored[`${m}.weight`] = { shape: w.shape, data };
  }
  return stored;
}

/** A new model: `base` with `adapter` merged (the base itself is left as it is). */
export function mergeAdapter(base: HfCausalLM, adapter: LoraAdapter): HfCausalLM {
  return new HfCausalLM(base.config, mergedTensors(base, adapter), base.dir);
}

/** Writes `base` with `adapter` merged to `dir` as a Hugging Face directory (config and tokenizer files from the base's directory). */
export function writeMerged(dir: string, base: HfCausalLM, adapter: LoraAdapter): void {
  if (!base.dir)
    throw new Error(
      'merge: the base must have been loaded from a directory (its config.json and tokenizer files are copied)',
    );
  // the weights are written in float32, whatever the base's were
  const raw = readRawConfig(base.dir);
  writeHfDirectory(
    dir,
    mergedTensors(base, adapter),
    { ...raw, dtype: 'float32', ...('torch_dtype' in raw ? { torch_dtype: 'float32' } : {}) },
    base.dir,
  );
}
