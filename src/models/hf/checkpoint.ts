/**
 * A Hugging Face policy in a run checkpoint: coevolve's checkpoint (hashed whole, written
 * atomically, with the optimizer state) whose folder is also what the ecosystem reads. With
 * an adapter, the folder is a PEFT adapter (adapter_config.json, adapter_model.safetensors)
 * and the checkpoint's weights are the adapter's alone; the base is named by path and sha256,
 * and a resume refuses a base that changed. Fully fine-tuned, the folder is a Hugging Face
 * model directory (config.json, model.safetensors). Either way the tokenizer files go with
 * it, the chat template defaulting to the variables the run rendered with (chat-defaults.ts).
 */
import * as tf from '@tensorflow/tfjs';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCheckpoint, saveCheckpoint, type Attachments, type LoadOptions } from '../checkpoint.js';
import { parseHfConfig } from './config.js';
import { bakeTokenizerConfig } from './chat-defaults.js';
import { TOKENIZER_FILES } from './create.js';
import { weightSpecs } from './layout.js';
import { LoraAdapter, targetModules, type LoraConfig } from './lora.js';
import { HfCausalLM } from './model.js';
import { HfPolicy } from './policy.js';
import { encodeSafetensors, indexShards } from './safetensors.js';
import { checkWeightHeaders } from './validate.js';

/** What config.json carries for coevolve beside the model's own fields (transformers keeps unknown keys as attributes). */
export interface HfProvenance {
  base: string;
  baseSha256: string;
  lora: LoraConfig | null;
}

/** The sha256 of a base's config.json and weights, read in 16 MB pieces: what a resume checks the base against. */
export function baseSha256(dir: string): string {
  const hash = createHash('sha256');
  const files = [
    'config.json',
    ...(existsSync(join(dir, 'model.safetensors')) ? ['model.safetensors'] : shardFiles(dir)),
  ];
  const buf = Buffer.alloc(16 << 20);
  for (const f of files) {
    hash.update(f);
    const fd = openSync(join(dir, f), 'r');
    try {
      for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0;) hash.update(buf.subarray(0, n));
    } finally {
      closeSync(fd);
    }
  }
  return hash.digest('hex');
}

/** The index and its shards, sorted; the shards checked to lie inside `dir` (see indexShards). */
function shardFiles(dir: string): string[] {
  const index = join(dir, 'model.safetensors.index.json');
  if (!existsSync(index)) throw new Error(`${dir}: no model.safetensors and no model.safetensors.index.json`);
  return ['model.safetensors.index.json', ...indexShards(dir)].sort();
}

/**
 * The weights a checkpoint of this config holds, by name, in the held layout: the adapter's, or
 * the whole model's. Its config.json must be its base's (plus the provenance), and the base's is
 * checked against the base's weight headers first: the weights are listed per layer, so a config
 * claiming 10^9 layers is refused here before any list is made.
 */
export function hfCheckpointShapes(config: unknown, where = 'checkpoint'): Record<string, number[]> {
  const raw = config as Record<string, unknown> & { coevolve?: HfProvenance };
  if (!raw?.coevolve) throw new Error('checkpoint: an hf checkpoint has no coevolve provenance in its config.json');
  const { coevolve, ...own } = raw;
  const baseConfig = join(coevolve.base, 'config.json');
  if (!existsSync(baseConfig))
    throw new Error(`checkpoint: ${where} was trained on the base ${coevolve.base}, which is missing`);
  const baseRaw = JSON.parse(readFileSync(baseConfig, 'utf8')) as Record<string, unknown>;
  const field = [...new Set([...Object.keys(baseRaw), ...Object.keys(own)])].find(
    (k) => JSON.stringify(baseRaw[k]) !== JSON.stringify(own[k]),
  );
  if (field !== undefined)
    throw new Error(
      `checkpoint: ${where}/config.json has ${field} ${JSON.stringify(own[field])}, its base ${baseConfig} has ${JSON.stringify(baseRaw[field])}`,
    );
  const hf = parseHfConfig(baseRaw, baseConfig);
  checkWeightHeaders(hf, baseConfig, coevolve.base);
  const lora = coevolve.lora;
  if (lora)
    return Object.fromEntries(
      targetModules(hf, lora.targetModules).flatMap((m) => [
        [`${m.name}.lora_A`, [m.in, lora.r]],
        [`${m.name}.lora_B`, [lora.r, m.out]],
      ]),
    );
  return Object.fromEntries(weightSpecs(hf).map((s) => [s.name, s.linear ? [s.shape[1], s.shape[0]] : s.shape]));
}

/** Saves `policy` (its base loaded from a directory) as a run checkpoint in `dir`; see the file's comment. */
export async function saveHfPolicy(
  dir: string,
  policy: HfPolicy,
  extra: Record<string, unknown>,
  attachments: Attachments = {},
): Promise<void> {
  const source = policy.base.dir;
  if (!source) throw new Error('checkpoint: a Hugging Face model saves only when it was loaded from a directory');
  const provenance: HfProvenance = {
    base: source,
    baseSha256: policy.baseSha256 ?? baseSha256(source),
    lora: policy.adapter?.config ?? null,
  };
  const config = {
    ...(JSON.parse(readFileSync(join(source, 'config.json'), 'utf8')) as Record<string, unknown>),
    coevolve: provenance,
  };
  const files: Attachments = { ...attachments };
  if (policy.adapter) Object.assign(files, policy.adapter.peftFiles(source));
  else files['model.safetensors'] = new Uint8Array(encodeSafetensors(policy.base.storedTensors()));
  // the tokenizer goes with an adapter too (PEFT saves it beside one; vLLM renders a LoRA's chats
  // with the tokenizer in its directory), its chat template defaulting to the variables the run
  // trained with (chat-defaults.ts)
  for (const f of [...TOKENIZER_FILES, ...(policy.adapter ? [] : ['generation_config.json'])]) {
    if (!existsSync(join(source, f))) continue;
    const body = await readFile(join(source, f));
    files[f] = f === 'tokenizer_config.json' ? bakeTokenizerConfig(body.toString('utf8')) : new Uint8Array(body);
  }
  await saveCheckpoint(dir, { kind: 'hf', config, extra }, policy.weights, files);
}

/**
 * Reads a run checkpoint of a Hugging Face policy. Its base is loaded from the recorded path
 * (or `base`, when the caller holds it already) and must hash as recorded; an adapter
 * checkpoint then gets its adapter, a full one its weights.
 */
export async function loadHfPolicy(
  dir: string,
  o: LoadOptions & { base?: HfCausalLM } = {},
): Promise<{ policy: HfPolicy; attachments: Record<string, Uint8Array>; extra: Record<string, unknown> }> {
  const { meta, weights, attachments } = await loadCheckpoint(
    dir,
    (kind, config) => {
      if (kind !== 'hf') throw new Error(`checkpoint: ${dir} holds a ${kind}, not an hf model`);
      return hfCheckpointShapes(config, dir);
    },
    o,
  );
  try {
    const provenance = (meta.config as { coevolve: HfProvenance }).coevolve;
    if (!existsSync(provenance.base))
      throw new Error(`checkpoint: ${dir} was trained on the base ${provenance.base}, which is missing`);
    const sha = o.base?.dir === provenance.base && o.base.sha256 ? o.base.sha256 : baseSha256(provenance.base);
    if (sha !== provenance.baseSha256)
      throw new Error(
        `checkpoint: ${dir} was trained on the base ${provenance.base} with sha256 ${provenance.baseSha256.slice(0, 12)}…, which now hashes ${sha.slice(0, 12)}…: the base changed`,
      );
    // an adapter's base is frozen; a full checkpoint's weights are assigned to its copy
    const base = o.base ?? HfCausalLM.load(provenance.base, { frozen: provenance.lora !== null });
    base.sha256 = sha;
    if (!provenance.lora) {
      for (const [n, t] of Object.entries(weights)) base.weights[n].assign(t);
      return { policy: new HfPolicy(base), attachments, extra: meta.extra ?? {} };
    }
    const held = (name: string) => weights[name].transpose().dataSync() as Float32Array; // held [in, r] / [r, out]; PEFT's layout is the transpose
    const saved = Object.fromEntries(
      targetModules(base.config, provenance.lora.targetModules).map((m) => [
        m.name,
        { a: held(`${m.name}.lora_A`), b: held(`${m.name}.lora_B`) },
      ]),
    );
    return {
      policy: new HfPolicy(base, new LoraAdapter(base.config, provenance.lora, 0, saved)),
      attachments,
      extra: meta.extra ?? {},
    };
  } finally {
    tf.dispose(Object.values(weights));
  }
}
