/**
 * What a replica thread builds its copy of each model from, and the building. A TinyLM is
 * rebuilt from its config. A Hugging Face policy is its base plus its adapter's settings; a
 * base is described once however many policies share it, and its frozen matrices (held
 * outside the backend's heap, src/backend/native/host.ts) travel as Float32Arrays on shared
 * memory, which every thread adopts as they are: the base is held once per process. Its other
 * weights (norms, biases; every weight of a base that trains or has no host matrices) are
 * copied into each thread's backend. The trained variables, the adapter's or all the base's,
 * then come from the weights the main thread publishes (replicas.ts), in `variables()` order.
 */
import type * as tf from '@tensorflow/tfjs';
import type { HfConfig } from '../models/hf/config.js';
import { LoraAdapter, type LoraConfig } from '../models/hf/lora.js';
import { HfCausalLM } from '../models/hf/model.js';
import { HfPolicy } from '../models/hf/policy.js';
import { TinyLM, type TinyLMConfig } from '../models/tinylm.js';
import { sharedCopy } from '../backend/native/host.js';

/** A model replicas can copy: coevolve's TinyLM, or a Hugging Face base with or without an adapter. */
export type Replicable = TinyLM | HfPolicy;

/**
 * The variables of `m` that an update may change, in the order they are published: none for a
 * policy that only generates on a frozen base (an evaluation), which then has none to train.
 */
export function published(m: Replicable): tf.Variable[] {
  return m.kind === 'hf' && !m.adapter && m.base.frozen ? [] : m.variables();
}

/** One model as a replica builds it; `sizes`, its variables' sizes, checks the copy. */
export type ModelCopy = { sizes: number[] } & (
  { kind: 'tinylm'; config: TinyLMConfig } | { kind: 'hf'; base: number; lora?: LoraConfig }
);

/** A Hugging Face base: every weight as stored (transformers' names and layout), each on shared memory. */
export interface BaseCopy {
  config: HfConfig;
  dir?: string;
  /** its matrices stay outside the heap: the replica adopts them */
  host: boolean;
  /** loaded frozen, and whether its shared rows are used: a replica's head and sampler are the main thread's */
  frozen?: boolean;
  compactHead?: boolean;
  tensors: Record<string, { shape: number[]; data: Float32Array }>;
}

/** The descriptions of `models`, their bases listed once each (by identity: policies on one base share it). */
export function describeCopies(models: Readonly<Record<string, Replicable>>): {
  models: Record<string, ModelCopy>;
  bases: BaseCopy[];
} {
  const bases = new Map<HfCausalLM, number>();
  const out: Record<string, ModelCopy> = {};
  const described: BaseCopy[] = [];
  for (const [id, m] of Object.entries(models)) {
    const sizes = published(m).map((v) => v.size);
    if (m.kind === 'tinylm') {
      out[id] = { kind: 'tinylm', config: m.config, sizes };
      continue;
    }
    if (!bases.has(m.base)) bases.set(m.base, described.push(describeBase(m.base)) - 1);
    out[id] = { kind: 'hf', base: bases.get(m.base)!, lora: m.adapter?.config, sizes };
  }
  return { models: out, bases: described };
}

function describeBase(base: HfCausalLM): BaseCopy {
  const tensors: BaseCopy['tensors'] = {};
  for (const [name, t] of Object.entries(base.storedTensors())) {
    // a host matrix loaded from a directory is on shared memory already (HfCausalLM.load)
    const adopt = name in base.host && t.data.buffer instanceof SharedArrayBuffer;
    tensors[name] = { shape: t.shape, data: adopt ? t.data : sharedCopy(t.data) };
  }
  return {
    config: base.config,
    dir: base.dir,
    host: base.frozen,
    frozen: base.loadedFrozen,
    compactHead: base.compactHead,
    tensors,
  };
}

/** The models `copies` describe, built in this thread (its backend initialised); their trained variables still to be loaded. */
export function buildCopies(copies: {
  models: Record<string, ModelCopy>;
  bases: BaseCopy[];
}): Record<string, Replicable> {
  const bases = new Map<number, HfCausalLM>();
  const base = (k: number) => {
    if (!bases.has(k)) {
      const b = copies.bases[k];
      bases.set(
        k,
        new HfCausalLM(b.config, b.tensors, b.dir, { host: b.host, frozen: b.frozen, compactHead: b.compactHead }),
      );
    }
    return bases.get(k)!;
  };
  const out: Record<string, Replicable> = {};
  for (const [id, spec] of Object.entries(copies.models)) {
    out[id] =
      spec.kind === 'tinylm'
        ? new TinyLM(spec.config)
        : new HfPolicy(base(spec.base), spec.lora && new LoraAdapter(base(spec.base).config, spec.lora));
    const sizes = published(out[id]).map((v) => v.size);
    if (sizes.join() !== spec.sizes.join())
      throw new Error(
        `model '${id}': variables of sizes ${sizes.join()} here, ${spec.sizes.join()} in the main thread`,
      );
  }
  return out;
}
