/**
 * A new decoder of a real architecture, made here: `config.json` as transformers writes it for
 * the family, the weights initialised as transformers initialises them (normal with std
 * `initializer_range` 0.02, norm gains 1, biases 0), and a real tokenizer's files. No
 * pretrained weights can be downloaded on these machines, so bases are pretrained from this
 * (`coevolve pretrain` with `architecture:`), then written with writeHfDirectory.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { Rng } from '../../util/rng.js';
import { bakeTokenizerConfig } from './chat-defaults.js';
import { parseHfConfig } from './config.js';
import { weightSpecs } from './layout.js';
import { HfCausalLM, type StoredWeights } from './model.js';
import { writeSafetensors } from './safetensors.js';
import { HfTokenizer } from './tokenizer.js';

const posInt = () => z.number().int().positive();

/** A new model's architecture, in transformers' terms, and the directory its tokenizer comes from. */
export const ArchitectureSchema = z.strictObject({
  kind: z.enum(['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM']),
  hidden: posInt(),
  layers: posInt(),
  heads: posInt(),
  kvHeads: posInt(),
  headDim: posInt().optional(), // default hidden / heads
  intermediate: posInt(),
  maxPositions: posInt().default(512),
  ropeTheta: z.number().positive().default(1000000),
  rmsNormEps: z.number().positive().default(1e-6),
  tied: z.boolean().default(true),
  tokenizer: z.string().min(1), // a directory with tokenizer.json (and tokenizer_config.json for its special tokens and chat template)
});
export type Architecture = z.output<typeof ArchitectureSchema>;

/** Files of a tokenizer directory that travel with a model. */
export const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'vocab.json',
  'merges.txt',
  'added_tokens.json',
];

/** The config.json transformers writes for `a`, with the tokenizer's vocabulary and special ids. */
export function architectureConfig(a: Architecture, tk: HfTokenizer): Record<string, unknown> {
  const modelType = { LlamaForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3' }[a.kind];
  return {
    architectures: [a.kind],
    model_type: modelType,
    vocab_size: tk.vocabSize,
    hidden_size: a.hidden,
    intermediate_size: a.intermediate,
    num_hidden_layers: a.layers,
    num_attention_heads: a.heads,
    num_key_value_heads: a.kvHeads,
    head_dim: a.headDim ?? a.hidden / a.heads,
    hidden_act: 'silu',
    max_position_embeddings: a.maxPositions,
    rms_norm_eps: a.rmsNormEps,
    rope_theta: a.ropeTheta,
    tie_word_embeddings: a.tied,
    attention_bias: false,
    ...(a.kind === 'LlamaForCausalLM' ? { mlp_bias: false } : { use_sliding_window: false }),
    initializer_range: 0.02,
    bos_token_id: tk.bosId ?? null,
    eos_token_id: tk.eosIds.length === 1 ? tk.eosIds[0] : tk.eosIds,
    pad_token_id: tk.padId ?? null,
    dtype: 'float32',
    use_cache: true,
  };
}

/** A new model of `a`, seeded: its config.json (as an object), the model, and its tokenizer. */
export function createHfModel(
  a: Architecture,
  seed: number,
): { raw: Record<string, unknown>; model: HfCausalLM; tokenizer: HfTokenizer } {
  const tokenizer = HfTokenizer.fromDirectory(a.tokenizer);
  const raw = architectureConfig(a, tokenizer);
  const config = parseHfConfig(raw, 'architecture');
  const rng = new Rng(seed);
  const tensors = Object.fromEntries(
    weightSpecs(config).map((w) => {
      const n = w.shape.reduce((x, y) => x * y, 1);
      const norm = w.name.endsWith('norm.weight');
      return [
        w.name,
        {
          shape: w.shape,
          data: norm
            ? new Float32Array(n).fill(1)
            : w.name.endsWith('.bias')
              ? new Float32Array(n)
              : Float32Array.from({ length: n }, () => 0.02 * rng.normal()),
        },
      ];
    }),
  );
  return { raw, model: new HfCausalLM(config, tensors), tokenizer };
}

/**
 * Writes `model` (or its stored tensors) as a Hugging Face directory: config.json (`raw`), generation_config.json (the
 * eos ids), model.safetensors (F32, transformers' names and orientation; a tied head is not
 * written) and the tokenizer files of `tokenizerFrom`, plus `extra` files. Written beside and
 * renamed into place, so a crash never leaves half a directory.
 */
export function writeHfDirectory(
  dir: string,
  model: HfCausalLM | StoredWeights,
  raw: Record<string, unknown>,
  tokenizerFrom: string,
  extra: Record<string, string | Uint8Array> = {},
): void {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeSafetensors(join(tmp, 'model.safetensors'), model instanceof HfCausalLM ? model.storedTensors() : model);
  writeFileSync(join(tmp, 'config.json'), JSON.stringify(raw, null, 2) + '\n');
  writeFileSync(
    join(tmp, 'generation_config.json'),
    JSON.stringify(
      {
        eos_token_id: raw.eos_token_id ?? null,
        bos_token_id: raw.bos_token_id ?? null,
        pad_token_id: raw.pad_token_id ?? null,
      },
      null,
      2,
    ) + '\n',
  );
  for (const f of TOKENIZER_FILES)
    if (existsSync(join(tokenizerFrom, f))) copyTokenizerFile(join(tokenizerFrom, f), join(tmp, f));
  for (const [name, body] of Object.entries(extra)) writeFileSync(join(tmp, name), body);
  mkdirSync(dirname(dir), { recursive: true });
  if (existsSync(dir)) {
    const old = `${dir}.old-${process.pid}`;
    renameSync(dir, old);
    renameSync(tmp, dir);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(tmp, dir);
}

/** Copies one tokenizer file; tokenizer_config.json's chat template gets the run's trained defaults (chat-defaults.ts). */
export function copyTokenizerFile(from: string, to: string): void {
  if (basename(from) === 'tokenizer_config.json') writeFileSync(to, bakeTokenizerConfig(readFileSync(from, 'utf8')));
  else copyFileSync(from, to);
}

/** The raw config.json of a directory (to write a fine-tuned copy with the same fields). */
export function readRawConfig(dir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
}
