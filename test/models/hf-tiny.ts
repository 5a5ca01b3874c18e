import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.js';
import { parseHfConfig } from '../../src/models/hf/config.js';
import { weightSpecs } from '../../src/models/hf/layout.js';
import { writeSafetensors } from '../../src/models/hf/safetensors.js';

/** GPT-2's byte-to-unicode table, which byte-level BPE vocabularies (GPT-2, Qwen) are written in. */
function byteLevelVocab(): Record<string, number> {
  const printable = [
    ...Array.from({ length: 94 }, (_, i) => 33 + i),
    ...Array.from({ length: 12 }, (_, i) => 161 + i),
    ...Array.from({ length: 82 }, (_, i) => 174 + i),
  ];
  const vocab: Record<string, number> = {};
  let extra = 0;
  for (let b = 0; b < 256; b++) vocab[String.fromCodePoint(printable.includes(b) ? b : 256 + extra++)] = b;
  return vocab;
}

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
/** Qwen's chat template, cut to its messages and generation prompt. */
const CHAT_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}" +
  "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/**
 * A tiny Qwen3-architecture model directory, as transformers would save one, with a byte-level
 * BPE tokenizer without merges (ids 0-255 are the bytes, then <|endoftext|>, <|im_start|>,
 * <|im_end|>; eos is <|im_end|>, as Qwen's instruct models have it) and random weights
 * (std 0.02, seeded). Small enough to make in a test; every file is what the ecosystem reads.
 */
export function writeTinyHf(
  dir: string,
  o: { seed?: number; hidden?: number; layers?: number; tied?: boolean } = {},
): string {
  mkdirSync(dir, { recursive: true });
  const hidden = o.hidden ?? 32;
  const config = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: 256 + SPECIALS.length,
    hidden_size: hidden,
    intermediate_size: 2 * hidden,
    num_hidden_layers: o.layers ?? 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: hidden / 4,
    hidden_act: 'silu',
    max_position_embeddings: 256,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: o.tied ?? true,
    attention_bias: false,
    use_sliding_window: false,
    bos_token_id: null,
    eos_token_id: 258,
    pad_token_id: 256,
    dtype: 'float32',
    transformers_version: '5.18.0',
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  writeFileSync(
    join(dir, 'generation_config.json'),
    JSON.stringify({ eos_token_id: [258, 256], pad_token_id: 256 }, null, 2),
  );
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    normalizer: null,
    post_processor: null,
    added_tokens: SPECIALS.map((content, i) => ({
      id: 256 + i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: byteLevelVocab(),
      merges: [],
    },
  };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify(
      {
        eos_token: '<|im_end|>',
        pad_token: '<|endoftext|>',
        bos_token: null,
        chat_template: CHAT_TEMPLATE,
        model_max_length: 128,
      },
      null,
      2,
    ),
  );
  const rng = new Rng(o.seed ?? 1);
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const s of weightSpecs(parseHfConfig(config))) {
    const size = s.shape.reduce((a, b) => a * b, 1);
    const norm = s.name.endsWith('norm.weight');
    tensors[s.name] = {
      shape: s.shape,
      data: Float32Array.from({ length: size }, () => (norm ? 1 : 0.02 * rng.normal())),
    };
  }
  writeSafetensors(join(dir, 'model.safetensors'), tensors);
  return dir;
}

/** A pretrain config's `architecture` for a tiny Qwen3 model (1 layer, width 32) on `tokenizer`'s files. */
export const tinyArchitecture = (tokenizer: string, maxPositions: number) => ({
  kind: 'Qwen3ForCausalLM' as const,
  hidden: 32,
  layers: 1,
  heads: 2,
  kvHeads: 1,
  intermediate: 64,
  maxPositions,
  tokenizer,
});
