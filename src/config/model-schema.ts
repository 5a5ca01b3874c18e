/** The `models` entries of an experiment config: a TinyLM, a Hugging Face model, a remote endpoint or an MLP. */
import { z } from 'zod';
import { always, int, isRecord, posInt, safeName } from './fields.js';

/** Partial TinyLM architecture; whatever is left out comes from the checkpoint or the builder's defaults. */
export const TinyLMConfigSchema = z
  .strictObject({
    vocabSize: posInt().optional(), // number of token ids
    dModel: posInt().optional(), // width of the residual stream
    nHeads: posInt().optional(), // attention heads; must divide dModel
    nLayers: posInt().optional(), // transformer blocks
    context: posInt().optional(), // longest sequence (prompt + completion)
    valueHead: z.boolean().optional(), // add PPO's value head
    seed: int().optional(), // seed of the weight initialisation
  })
  .superRefine((c, ctx) => {
    if (!isRecord(c)) return;
    const { dModel, nHeads } = c;
    if (
      Number.isInteger(dModel) &&
      Number.isInteger(nHeads) &&
      (nHeads as number) > 0 &&
      (dModel as number) % (nHeads as number) !== 0
    ) {
      ctx.addIssue({ code: 'custom', path: ['nHeads'], message: `must divide dModel (${dModel}), got ${nHeads}` });
    }
  }, always);

/** An inference-only model behind an OpenAI-compatible endpoint (`coevolve serve`, vLLM, llama.cpp...). */
export const RemoteSchema = z.strictObject({
  url: z.string().url(), // the API base, e.g. http://127.0.0.1:8000/v1
  model: z.string().min(1), // the model id the endpoint serves
  apiKeyEnv: z.string().min(1).optional(), // the environment variable holding its API key (never the key itself in a config)
  timeoutMs: posInt().default(30000), // per request
  retries: int().min(0).default(2), // retries with exponential backoff on connection errors, timeouts, 429 and 5xx (the openai client's)
});

/** A LoRA adapter to train on a Hugging Face model, with PEFT's semantics (src/models/hf/lora.ts). */
export const LoraSchema = z.strictObject({
  r: posInt().default(8), // rank
  alpha: z.number().positive().default(16), // scaling alpha / r
  rslora: z.boolean().default(false), // scaling alpha / sqrt(r) instead
  dropout: z.number().min(0).lt(1).default(0), // on the adapter's input, while training
  targetModules: z.union([z.array(z.string().min(1)).min(1), z.string().min(1)]).default('all-linear'), // module names or suffixes, a whole-name regex, or all-linear (every projection but the head)
});

/** A policy that reads numbers (a game's observation vector) and scores actions; its input and output sizes are the arena's. */
export const MlpSchema = z.strictObject({
  hiddenSizes: z.array(posInt()).default([64, 64]), // widths of the hidden layers, first to last
  activation: z.enum(['tanh', 'relu']).default('tanh'), // after each hidden layer
});

/**
 * The KL term's reference as a table over the game's information states (the magnet of
 * magnetic mirror descent, Sokota et al. 2022): uniform over each state's legal moves, or
 * moving: after every update it takes a share `rate` of the policy's table, so the
 * regularisation follows the learner and its fixed point is a Nash equilibrium.
 */
export const MagnetSchema = z.strictObject({
  kind: z.enum(['uniform', 'moving']).default('uniform'),
  rate: z.number().gt(0).max(1).default(0.01), // moving: the policy's share of the magnet after each update
});

export const ModelSchema = z
  .strictObject({
    checkpoint: z.string().min(1).optional(), // dir of a saved model to start from
    // model class: a TinyLM trained here, a Hugging Face directory, a remote endpoint (inference only), or an MLP on a game's numbers
    kind: z.enum(['tinylm', 'hf', 'remote', 'mlp']).default('tinylm'),
    config: TinyLMConfigSchema.optional(), // architecture (for a fresh model, or checked against the checkpoint)
    path: z.string().min(1).optional(), // kind hf: the Hugging Face model directory (config.json, safetensors, tokenizer.json); nothing is downloaded
    adapter: z.string().min(1).optional(), // kind hf: a PEFT LoRA adapter directory to start from (then trained)
    lora: LoraSchema.optional(), // kind hf: train a new LoRA adapter on the frozen base (default: full fine-tuning)
    // kind hf: roles' named adapters (`roles.<id>.adapter`) that start from a PEFT directory, then train, by name; the
    // others start new (e.g. a judge trained by an earlier run, its KL reference that starting adapter)
    adapters: z.record(safeName(), z.string().min(1)).optional(),
    reference: z.boolean().default(false), // keep a frozen copy for the KL term
    remote: RemoteSchema.optional(), // kind remote: where the model is served
    mlp: MlpSchema.optional(), // kind mlp: its layers (the arena gives its input and action counts)
    magnet: MagnetSchema.optional(), // kind mlp: the KL reference as a table over the game's states (default uniform)
  })
  .superRefine((m, ctx) => {
    if (!isRecord(m)) return;
    if (m.kind === 'hf') {
      if (m.path === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['path'],
          message: "required for kind 'hf': a Hugging Face model directory",
        });
      for (const f of ['checkpoint', 'config'] as const)
        if (m[f] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [f],
            message: "kind 'hf' reads its weights and architecture from path; remove it",
          });
      if (m.adapter !== undefined && m.lora !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['lora'],
          message: 'the adapter directory has its own LoRA settings; give adapter or lora, not both',
        });
    } else
      for (const f of ['path', 'adapter', 'lora', 'adapters'] as const)
        if (m[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: "only for kind 'hf'" });
    if (m.kind === 'mlp') {
      if (m.config !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['config'],
          message: "kind 'mlp' takes its layers from mlp: { hiddenSizes }",
        });
      if (m.reference === true)
        ctx.addIssue({
          code: 'custom',
          path: ['reference'],
          message: "kind 'mlp' keeps its KL reference as a table: set magnet instead",
        });
    } else
      for (const f of ['mlp', 'magnet'] as const)
        if (m[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: "only for kind 'mlp'" });
    if (m.kind === 'remote') {
      if (m.remote === undefined)
        ctx.addIssue({ code: 'custom', path: ['remote'], message: "required for kind 'remote': { url, model }" });
      for (const f of ['checkpoint', 'config'] as const)
        if (m[f] !== undefined)
          ctx.addIssue({ code: 'custom', path: [f], message: 'a remote model has no local weights; remove it' });
      if (m.reference === true)
        ctx.addIssue({ code: 'custom', path: ['reference'], message: 'a remote model cannot be a KL reference' });
    } else if (m.remote !== undefined)
      ctx.addIssue({ code: 'custom', path: ['remote'], message: "only for kind 'remote'" });
  }, always);
