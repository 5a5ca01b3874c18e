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
}

/** Every weight the config's model has, in the order transformers lists them. */
export function weightSpecs(c: HfConfig): WeightSpec[] {
  return c.architecture === 'GPT2LMHeadModel' ? gpt2(c) : llama(c);
}

function llama(c: HfConfig): WeightSpec[] {
  const d = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  const out: WeightSpec[] = [{ name: 'model.embed_tokens.weight', shape: [c.vocabSize, d], linear: false }];
  const lin = (name: string, o: number, i: number, bias: boolean) => {
    out.push({ name: `${name}.weight`, shape: [o, i], linear: true });
    if (bias) out.push({ name: `${name}.bias`, shape: [o], linear: false });
  };
  for (let l = 0; l < c.layers; l++) {
    const p = `model.layers.${l}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [d], linear: false });
    lin(`${p}.self_attn.q_proj`, q, d, c.qkvBias);
    lin(`${p}.self_attn.k_proj`, kv, d, c.qkvBias);
    lin(`${p}.self_attn.v_proj`, kv, d, c.qkvBias);
    lin(`${p}.self_attn.o_proj`, d, q, c.outBias);
    if (c.qkNorm)
      out.push(
        { name: `${p}.self_attn.q_norm.weight`, shape: [c.headDim], linear: false },
        { name: `${p}.self_attn.k_norm.weight`, shape: [c.headDim], linear: false },
      );
    out.push({ name: `${p}.post_attention_layernorm.weight`, shape: [d], linear: false });
    lin(`${p}.mlp.gate_proj`, c.intermediate, d, c.mlpBias);
    lin(`${p}.mlp.up_proj`, c.intermediate, d, c.mlpBias);
    lin(`${p}.mlp.down_proj`, d, c.intermediate, c.mlpBias);
  }
  out.push({ name: 'model.norm.weight', shape: [d], linear: false });
  if (!c.tied) out.push({ name: 'lm_head.weight', shape: [c.vocabSize, d], linear: true });
  return out;
}

function gpt2(c: HfConfig): WeightSpec[] {
  const d = c.hidden;
  const out: WeightSpec[] = [
    { name: 'transformer.wte.weight', shape: [c.vocabSize, d], linear: false },
    { name: 'transformer.wpe.weight', shape: [c.maxPositions, d], linear: false },
  ];
  const add = (name: string, shape: number[]) => out.push({ name, shape, linear: false });
  for (let l = 0; l < c.layers; l++) {
    const p = `transformer.h.${l}`;
    add(`${p}.ln_1.weight`, [d]);
    add(`${p}.ln_1.bias`, [d]);
    add(`${p}.attn.c_attn.weight`, [d, 3 * d]);
    add(`${p}.attn.c_attn.bias`, [3 * d]);
    add(`${p}.attn.c_proj.weight`, [d, d]);
    add(`${p}.attn.c_proj.bias`, [d]);
    add(`${p}.ln_2.weight`, [d]);
    add(`${p}.ln_2.bias`, [d]);
    add(`${p}.mlp.c_fc.weight`, [d, c.intermediate]);
    add(`${p}.mlp.c_fc.bias`, [c.intermediate]);
    add(`${p}.mlp.c_proj.weight`, [c.intermediate, d]);
    add(`${p}.mlp.c_proj.bias`, [d]);
  }
  add('transformer.ln_f.weight', [d]);
  add('transformer.ln_f.bias', [d]);
  if (!c.tied) out.push({ name: 'lm_head.weight', shape: [c.vocabSize, d], linear: true });
  return out;
}

/** Names a checkpoint may hold beside the weights, which transformers also ignores (buffers of older versions). */
export const IGNORED = /(rotary_emb\.inv_freq|attn\.bias|attn\.masked_bias)$/;

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
