/**
 * Where each weight of a Hugging Face checkpoint sits, by its transformers name, for the
 * four families: its shape as stored, and whether it is an `nn.Linear` weight ([out, in],
 * transposed here to [in, out] for `x @ w`). GPT-2's Conv1D weights are stored [in, out]
 * already.
 */
import type { HfConfig } from './config.js';

export interface WeightSpec {
  /** the transformers name, as in model.safetensors */
  name: string;
  /** the shape in the file */
  shape: number[];
  /** an nn.Linear weight: held transposed, [in, out] */
  linear: boolean;
  /** the config.json field behind each dimension, for errors */
  dims: string[];
  /** the field that gives the model this weight, when the architecture alone does not (`attention_bias: true`) */
  by?: string;
}

/** Every weight the config's model has, in the order transformers lists them. */
export function weightSpecs(c: HfConfig): WeightSpec[] {
  return c.architecture === 'GPT2LMHeadModel' ? gpt2(c) : llama(c);
}

function llama(c: HfConfig): WeightSpec[] {
  const d = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const [D, Q, KV, I, V] = [
    'hidden_size',
    'num_attention_heads * head_dim',
    'num_key_value_heads * head_dim',
    'intermediate_size',
    'vocab_size',
  ];
  const out: WeightSpec[] = [
    { name: 'model.embed_tokens.weight', shape: [c.vocabSize, d], linear: false, dims: [V, D] },
  ];
  const vec = (name: string, n: number, dim: string, by?: string) =>
    out.push({ name, shape: [n], linear: false, dims: [dim], by });
  const lin = (name: string, o: number, i: number, dims: string[], bias?: string) => {
    out.push({ name: `${name}.weight`, shape: [o, i], linear: true, dims });
    if (bias) vec(`${name}.bias`, o, dims[0], bias);
  };
  // Qwen2 has q, k and v biases whatever attention_bias says
  const attnBias = c.architecture === 'Qwen2ForCausalLM' ? c.architecture : 'attention_bias: true';
  for (let l = 0; l < c.layers; l++) {
    const p = `model.layers.${l}`;
    vec(`${p}.input_layernorm.weight`, d, D);
    lin(`${p}.self_attn.q_proj`, q, d, [Q, D], c.qkvBias ? attnBias : undefined);
    lin(`${p}.self_attn.k_proj`, kv, d, [KV, D], c.qkvBias ? attnBias : undefined);
    lin(`${p}.self_attn.v_proj`, kv, d, [KV, D], c.qkvBias ? attnBias : undefined);
    lin(`${p}.self_attn.o_proj`, d, q, [D, Q], c.outBias ? attnBias : undefined);
    if (c.qkNorm) {
      vec(`${p}.self_attn.q_norm.weight`, c.headDim, 'head_dim');
      vec(`${p}.self_attn.k_norm.weight`, c.headDim, 'head_dim');
    }
    vec(`${p}.post_attention_layernorm.weight`, d, D);
    const mlpBias = c.mlpBias ? 'mlp_bias: true' : undefined;
    lin(`${p}.mlp.gate_proj`, c.intermediate, d, [I, D], mlpBias);
    lin(`${p}.mlp.up_proj`, c.intermediate, d, [I, D], mlpBias);
    lin(`${p}.mlp.down_proj`, d, c.intermediate, [D, I], mlpBias);
  }
  vec('model.norm.weight', d, D);
  out.push(...untiedHead(c, [V, D]));
  return out;
}

function gpt2(c: HfConfig): WeightSpec[] {
  const d = c.hidden;
  const [D, I, V] = ['n_embd', 'n_inner', 'vocab_size'];
  const out: WeightSpec[] = [
    { name: 'transformer.wte.weight', shape: [c.vocabSize, d], linear: false, dims: [V, D] },
    { name: 'transformer.wpe.weight', shape: [c.maxPositions, d], linear: false, dims: ['n_positions', D] },
  ];
  const add = (name: string, shape: number[], dims: string[]) => out.push({ name, shape, linear: false, dims });
  for (let l = 0; l < c.layers; l++) {
    const p = `transformer.h.${l}`;
    add(`${p}.ln_1.weight`, [d], [D]);
    add(`${p}.ln_1.bias`, [d], [D]);
    add(`${p}.attn.c_attn.weight`, [d, 3 * d], [D, `3 * ${D}`]);
    add(`${p}.attn.c_attn.bias`, [3 * d], [`3 * ${D}`]);
    add(`${p}.attn.c_proj.weight`, [d, d], [D, D]);
    add(`${p}.attn.c_proj.bias`, [d], [D]);
    add(`${p}.ln_2.weight`, [d], [D]);
    add(`${p}.ln_2.bias`, [d], [D]);
    add(`${p}.mlp.c_fc.weight`, [d, c.intermediate], [D, I]);
    add(`${p}.mlp.c_fc.bias`, [c.intermediate], [I]);
    add(`${p}.mlp.c_proj.weight`, [c.intermediate, d], [I, D]);
    add(`${p}.mlp.c_proj.bias`, [d], [D]);
  }
  add('transformer.ln_f.weight', [d], [D]);
  add('transformer.ln_f.bias', [d], [D]);
  out.push(...untiedHead(c, [V, D]));
  return out;
}

/** Names a checkpoint may hold beside the weights, which transformers also ignores (buffers of older versions). */
export const IGNORED = /(rotary_emb\.inv_freq|attn\.bias|attn\.masked_bias)$/;

/** Of `names`, those the config's model does not have (a tied model may still hold lm_head.weight), listed for an error. */
export function unknownWeights(c: HfConfig, names: string[]): string | undefined {
  const known = new Set(weightSpecs(c).map((s) => s.name));
  const extra = names.filter((n) => !known.has(n) && !IGNORED.test(n) && !(c.tied && n === 'lm_head.weight'));
  if (!extra.length) return undefined;
  return `${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ` and ${extra.length - 5} more` : ''}`;
}

/** The stored dtypes a weight may have (widened to float32). */
export const FLOAT_DTYPES = ['F32', 'F16', 'BF16', 'F64'];

/** Refuses a weight of another dtype than FLOAT_DTYPES: integer dtypes are quantized weights. */
export function checkFloat(where: string, name: string, dtype: string | undefined): void {
  if (dtype !== undefined && !FLOAT_DTYPES.includes(dtype))
    throw new Error(
      `${where}: weight ${name} is ${dtype}: integer (quantized) weights are not supported; ${FLOAT_DTYPES.join(', ')} are`,
    );
}

/** A projection LoRA may adapt: an nn.Linear, or GPT-2's Conv1D; `in` and `out` are its widths. */
export interface LinearModule {
  name: string;
  in: number;
  out: number;
}

/** Every projection of the model but the output head (PEFT's `all-linear` leaves the head out). */
export function linearModules(c: HfConfig): LinearModule[] {
  const gpt2 = c.architecture === 'GPT2LMHeadModel';
  return weightSpecs(c)
    .filter(
      (s) =>
        s.name.endsWith('.weight') &&
        s.name !== 'lm_head.weight' &&
        (s.linear || (gpt2 && /\.(c_attn|c_proj|c_fc)\.weight$/.test(s.name))),
    )
    .map((s) => ({
      name: s.name.slice(0, -'.weight'.length),
      in: s.linear ? s.shape[1] : s.shape[0],
      out: s.linear ? s.shape[0] : s.shape[1],
    }));
}

/** The head's own weight when it is not the embedding's: [vocab, hidden], its fields named by `dims`. */
function untiedHead(c: HfConfig, dims: string[]): WeightSpec[] {
  if (c.tied) return [];
  return [
    { name: 'lm_head.weight', shape: [c.vocabSize, c.hidden], linear: true, dims, by: 'tie_word_embeddings: false' },
  ];
}
