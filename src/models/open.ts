/**
 * Opens any model a command may name: a Hugging Face directory (with `adapter`, a PEFT
 * adapter on it), a run checkpoint of one (a PEFT adapter or a fine-tuned directory), or a
 * TinyLM checkpoint. A Hugging Face directory without tokenizer.json opens without a
 * tokenizer: it works on token ids only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CharTokenizer } from '../tokenizer/index.js';
import { loadHfPolicy } from './hf/checkpoint.js';
import { LoraAdapter } from './hf/lora.js';
import { HfCausalLM } from './hf/model.js';
import { HfPolicy } from './hf/policy.js';
import { HfTokenizer } from './hf/tokenizer.js';
import { loadModel } from './store.js';
import type { TinyLM } from './tinylm.js';

export type OpenedModel =
  | { kind: 'tinylm'; model: TinyLM; tokenizer: CharTokenizer }
  | { kind: 'hf'; policy: HfPolicy; tokenizer?: HfTokenizer };

export async function openModel(path: string, adapter?: string): Promise<OpenedModel> {
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  const isCheckpoint = existsSync(join(path, 'model.json'));
  const kind = isCheckpoint
    ? (JSON.parse(readFileSync(join(path, 'model.json'), 'utf8')) as { modelTopology?: { kind?: string } })
        .modelTopology?.kind
    : 'hf';
  if (kind === 'hf') {
    // what a command opens it does not train: a base is loaded frozen
    const opened = isCheckpoint
      ? (await loadHfPolicy(path)).policy
      : new HfPolicy(HfCausalLM.load(path, { frozen: true }));
    const policy = adapter ? new HfPolicy(opened.base, LoraAdapter.load(adapter, opened.base.config)) : opened;
    const dir = existsSync(join(path, 'tokenizer.json')) ? path : opened.base.dir!;
    return {
      kind: 'hf',
      policy,
      tokenizer: existsSync(join(dir, 'tokenizer.json')) ? HfTokenizer.fromDirectory(dir) : undefined,
    };
  }
  if (adapter) throw new Error(`an adapter applies to Hugging Face models; ${path} holds a ${kind}`);
  const loaded = await loadModel(path);
  if (loaded.kind !== 'tinylm') throw new Error(`${path} holds a ${loaded.kind}, not a language model`);
  return { kind: 'tinylm', model: loaded.model, tokenizer: loaded.tokenizer ?? new CharTokenizer() };
}
