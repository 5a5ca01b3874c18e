/**
 * A Hugging Face `config.json`, read the way transformers reads it for the four decoder
 * families coevolve runs, into one plain description. Anything those families have that is
 * not supported (a sliding window, quantization, another rope type, another activation) is
 * refused here, naming the file and the field, before any weight is read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ARCHITECTURES = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM', 'GPT2LMHeadModel'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

/** Rotary frequencies: transformers' default, linear and llama3 rope types. */
export interface Rope {
  theta: number;
  type: 'default' | 'linear' | 'llama3';
  factor?: number;
  lowFreqFactor?: number;
  highFreqFactor?: number;
  originalMaxPositions?: number;
}

export interface HfConfig {
  architecture: Architecture;
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  /** RMSNorm (Llama, Qwen) or LayerNorm with bias (GPT-2) */
  norm: 'rms' | 'layer';
  eps: number;
  /** rotary (Llama, Qwen) or learned absolute positions (GPT-2) */
  rope?: Rope;
  maxPositions: number;
  /** biases on q, k, v; on the attention output; on the MLP */
  qkvBias: boolean;
  outBias: boolean;
  mlpBias: boolean;
  /** Qwen3's RMSNorm of each head's queries and keys, before rotation */
  qkNorm: boolean;
  /** SwiGLU (gate, up, down) or GPT-2's 4x MLP with gelu_new */
  mlp: 'swiglu' | 'gelu_new';
  /** the head shares the token embedding */
  tied: boolean;
  /** eos ids from config.json (generation_config.json may override; see the tokenizer) */
  eosIds: number[];
  padId?: number;
  bosId?: number;
}

type Json = Record<string, unknown>;

/** The largest size config.json may give: 2^31 - 1, the most a tensor dimension or an int32 id can be. */
export const MAX_SIZE = 2 ** 31 - 1;

/** Reads and checks `DIR/config.json`. */
export function readHfConfig(dir: string): HfConfig {
  const path = join(dir, 'config.json');
  if (!existsSync(path))
    throw new Error(
      `${dir}: config.json is missing (a Hugging Face model directory holds config.json and model.safetensors)`,
    );
  let raw: Json;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as Json;
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  return parseHfConfig(raw, path);
}

/** Checks a parsed config.json; `where` names it in errors. */
export function parseHfConfig(raw: Json, where = 'config.json'): HfConfig {
  const fail = (field: string, why: string): never => {
    throw new Error(`${where}: ${field}: ${why}`);
  };
  const archs = raw.architectures;
  const architecture = (Array.isArray(archs) ? archs[0] : undefined) as Architecture;
  if (!ARCHITECTURES.includes(architecture))
    fail('architectures', `${JSON.stringify(archs)} is not supported; supported: ${ARCHITECTURES.join(', ')}`);
  if (raw.quantization_config !== undefined)
    fail('quantization_config', 'quantized weights are not supported (float32, float16 or bfloat16 only)');
  // sizes are bounded here and checked against the weights' headers before anything is made
  const int = (field: string, fallback?: number): number => {
    const v = raw[field] ?? fallback;
    if (!Number.isInteger(v) || (v as number) <= 0 || (v as number) > MAX_SIZE)
      fail(field, `a positive integer up to 2^31 - 1, got ${JSON.stringify(raw[field])}`);
    return v as number;
  };
  const num = (field: string, fallback?: number): number => {
    const v = raw[field] ?? fallback;
    if (typeof v !== 'number' || !(v > 0)) fail(field, `a positive number, got ${JSON.stringify(raw[field])}`);
    return v as number;
  };
  const ids = (field: string): number[] => {
    const v = raw[field];
    if (v === undefined || v === null) return [];
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => Number.isInteger(x) && x >= 0))
      fail(field, `a token id or a list of them, got ${JSON.stringify(v)}`);
    return list as number[];
  };
  const optionalId = (field: string) => ids(field)[0];
  const tied = raw.tie_word_embeddings === undefined ? true : raw.tie_word_embeddings === true;
  const common = {
    architecture,
    vocabSize: int('vocab_size'),
    tied,
    eosIds: ids('eos_token_id'),
    padId: optionalId('pad_token_id'),
    bosId: optionalId('bos_token_id'),
  };
  if (architecture === 'GPT2LMHeadModel') {
    if (raw.activation_function !== undefined && raw.activation_function !== 'gelu_new')
      fail('activation_function', `'${String(raw.activation_function)}' is not supported (gelu_new)`);
    if (raw.scale_attn_by_inverse_layer_idx === true) fail('scale_attn_by_inverse_layer_idx', 'true is not supported');
    if (raw.scale_attn_weights === false) fail('scale_attn_weights', 'false is not supported');
    const hidden = int('n_embd');
    const heads = int('n_head');
    if (hidden % heads) fail('n_head', `${heads} does not divide n_embd ${hidden}`);
    return {
      ...common,
      hidden,
      layers: int('n_layer'),
      heads,
      kvHeads: heads,
      headDim: hidden / heads,
      intermediate: raw.n_inner == null ? 4 * hidden : int('n_inner'),
      norm: 'layer',
      eps: num('layer_norm_epsilon', 1e-5),
      maxPositions: int('n_positions'),
      qkvBias: true,
      outBias: true,
      mlpBias: true,
      qkNorm: false,
      mlp: 'gelu_new',
    };
  }
  if (raw.hidden_act !== undefined && raw.hidden_act !== 'silu')
    fail('hidden_act', `'${String(raw.hidden_act)}' is not supported (silu)`);
  if (raw.use_sliding_window === true) fail('use_sliding_window', 'a sliding window is not supported');
  if (Array.isArray(raw.layer_types) && raw.layer_types.some((t) => t !== 'full_attention'))
    fail('layer_types', `only full_attention layers are supported, got ${JSON.stringify(raw.layer_types)}`);
  if (raw.pretraining_tp !== undefined && raw.pretraining_tp !== 1)
    fail('pretraining_tp', `${String(raw.pretraining_tp)} is not supported (1)`);
  const hidden = int('hidden_size');
  const heads = int('num_attention_heads');
  const kvHeads = int('num_key_value_heads', heads);
  if (heads % kvHeads) fail('num_key_value_heads', `${kvHeads} does not divide num_attention_heads ${heads}`);
  if (raw.head_dim == null && hidden % heads)
    fail('num_attention_heads', `${heads} does not divide hidden_size ${hidden}`);
  const qwen2 = architecture === 'Qwen2ForCausalLM';
  const attentionBias = raw.attention_bias === true;
  return {
    ...common,
    hidden,
    layers: int('num_hidden_layers'),
    heads,
    kvHeads,
    headDim: raw.head_dim == null ? hidden / heads : int('head_dim'),
    intermediate: int('intermediate_size'),
    norm: 'rms',
    eps: num('rms_norm_eps', 1e-6),
    rope: readRope(raw, fail),
    maxPositions: int('max_position_embeddings'),
    // Qwen2 has biases on q, k and v only; Llama and Qwen3 on all four projections when attention_bias is set
    qkvBias: qwen2 || attentionBias,
    outBias: !qwen2 && attentionBias,
    mlpBias: raw.mlp_bias === true,
    qkNorm: architecture === 'Qwen3ForCausalLM',
    mlp: 'swiglu',
  };
}

/** `rope_parameters` (transformers 5) or `rope_theta` with `rope_scaling` (transformers 4). */
function readRope(raw: Json, fail: (field: string, why: string) => never): Rope {
  const params = (raw.rope_parameters ?? raw.rope_scaling ?? {}) as Json;
  const field = raw.rope_parameters ? 'rope_parameters' : 'rope_scaling';
  if (typeof params !== 'object' || params === null) fail(field, `an object, got ${JSON.stringify(params)}`);
  const theta = (params.rope_theta ?? raw.rope_theta ?? 10000) as number;
  if (typeof theta !== 'number' || !(theta > 0)) fail('rope_theta', `a positive number, got ${JSON.stringify(theta)}`);
  const type = String(params.rope_type ?? params.type ?? 'default');
  if (type === 'default') return { theta, type };
  const factor = params.factor as number;
  if (typeof factor !== 'number' || !(factor > 0))
    fail(`${field}.factor`, `a positive number, got ${JSON.stringify(params.factor)}`);
  if (params.partial_rotary_factor !== undefined && params.partial_rotary_factor !== 1)
    fail(`${field}.partial_rotary_factor`, 'partial rotation is not supported');
  if (type === 'linear') return { theta, type, factor };
  if (type !== 'llama3') fail(`${field}.rope_type`, `'${type}' is not supported; supported: default, linear, llama3`);
  const need = (k: string) => {
    const v = params[k];
    if (typeof v !== 'number' || !(v > 0)) fail(`${field}.${k}`, `a positive number, got ${JSON.stringify(v)}`);
    return v as number;
  };
  return {
    theta,
    type,
    factor,
    lowFreqFactor: need('low_freq_factor'),
    highFreqFactor: need('high_freq_factor'),
    originalMaxPositions: need('original_max_position_embeddings'),
  };
}

/**
 * The rotary inverse frequencies, one per pair of a head's dimensions, as transformers
 * computes them in float32 (`_compute_default_rope_parameters`, `_compute_llama3_parameters`;
 * linear scaling divides them by the factor).
 */
export function inverseFrequencies(rope: Rope, headDim: number): Float32Array {
  const half = headDim / 2;
  const inv = new Float32Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / Math.fround(rope.theta ** Math.fround((2 * i) / headDim));
  if (rope.type === 'linear') return inv.map((f) => f / rope.factor!);
  if (rope.type !== 'llama3') return inv;
  const { factor, lowFreqFactor: low, highFreqFactor: high, originalMaxPositions: old } = rope as Required<Rope>;
  const lowWavelen = old / low;
  const highWavelen = old / high;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen > lowWavelen) return f / factor; // long waves: scaled
    if (wavelen < highWavelen) return f; // short waves: kept
    const smooth = (old / wavelen - low) / (high - low);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}
