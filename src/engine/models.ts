import type { Attachments } from '../models/checkpoint.js';
import { loadModel, saveModel } from '../models/store.js';
import { OPTIMIZER_FILES } from '../rl/optimizer-state.js';
import { TinyLM, type TinyLMConfig } from '../models/tinylm.js';
import { MlpPolicy } from '../models/mlp.js';
import type { ExperimentConfig } from '../config/schema.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { baseSha256, loadHfPolicy, saveHfPolicy } from '../models/hf/checkpoint.js';
import { LoraAdapter } from '../models/hf/lora.js';
import { HfCausalLM } from '../models/hf/model.js';
import { HfPolicy } from '../models/hf/policy.js';
import { loadHfTokenizer } from '../models/hf/text.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { hashSeed } from './loop-parts.js';

/** A model trained in this process: coevolve's TinyLM, a Hugging Face decoder with or without its own adapter, or an MLP on a game's numbers. */
export type RunModel = TinyLM | HfPolicy | MlpPolicy;
/** A model trained here that reads and writes text. */
export type TextModel = TinyLM | HfPolicy;

export interface LoadedModels {
  models: Record<string, RunModel>;
  references: Record<string, TextModel>;
  /** the TinyLM models' shared character tokenizer (the default one when there are none) */
  tokenizer: CharTokenizer;
  /** each local model's tokenizer: the shared one for TinyLM, its own for a Hugging Face model */
  tokenizers: Record<string, Tokenizer>;
  /** files saved with each model in `resumeDir` (its optimizer state), checked with it */
  attachments: Record<string, Record<string, Uint8Array>>;
}

/**
 * Builds every model of the config: from `resumeDir` (a run checkpoint) when resuming,
 * else from its own checkpoint or fresh from its config. A model with `reference: true`
 * also gets a frozen copy of its starting weights for the KL term. All models must share
 * one tokenizer, since roles on different models exchange text. A model of kind mlp takes its
 * input and action counts from `features`, the arena's (a game's observation vector and moves).
 */
export async function loadModels(
  c: ExperimentConfig,
  resumeDir?: string,
  o: { freshOptimizer?: boolean; features?: { inputSize: number; numActions: number } } = {},
): Promise<LoadedModels> {
  const models: Record<string, RunModel> = {};
  const references: Record<string, TextModel> = {};
  const attachments: Record<string, Record<string, Uint8Array>> = {};
  const tokenizers: Record<string, Tokenizer> = {};
  const hf = new HfBases(c.seed);
  let tokenizer: CharTokenizer | undefined;
  for (const [id, spec] of Object.entries(c.models)) {
    if (spec.kind === 'remote') continue; // served elsewhere: no weights here
    if (spec.kind === 'mlp') {
      const got = await loadMlp(c, id, resumeDir ?? spec.checkpoint, resumeDir, o);
      models[id] = got.model;
      if (got.attachments) attachments[id] = got.attachments;
      continue;
    }
    if (spec.kind === 'hf') {
      const got = await hf.load(id, spec, resumeDir, o);
      models[id] = got.policy;
      tokenizers[id] = got.tokenizer;
      if (got.attachments) attachments[id] = got.attachments;
      if (spec.reference) references[id] = await hf.reference(id, spec, got.policy, syncedReference(c, resumeDir, id));
      continue;
    }
    const start = spec.checkpoint;
    const source = resumeDir ? join(resumeDir, id) : start;
    if (source) {
      // a fresh optimizer does not read the saved state, so a missing or broken one is no obstacle
      const loaded = await loadModel(source, resumeDir && o.freshOptimizer ? { ignore: OPTIMIZER_FILES } : {});
      if (loaded.kind !== 'tinylm') throw new Error(`models.${id}: ${source} holds a ${loaded.kind}, not a tinylm`);
      for (const [k, v] of Object.entries(spec.config ?? {})) {
        if (k !== 'seed' && (loaded.model.config as unknown as Record<string, unknown>)[k] !== v) {
          throw new Error(
            `models.${id}.config.${k}: ${String(v)} disagrees with ${source} (${String((loaded.model.config as unknown as Record<string, unknown>)[k])})`,
          );
        }
      }
      models[id] = loaded.model;
      if (resumeDir) attachments[id] = loaded.attachments;
      tokenizer = checkSame(tokenizer, loaded.tokenizer ?? new CharTokenizer(), id);
    } else {
      tokenizer = checkSame(tokenizer, new CharTokenizer(), id);
      models[id] = new TinyLM(freshConfig(c, id, tokenizer));
    }
    if (spec.reference) {
      // The reference is the starting policy (the model's own checkpoint, not the resumed
      // weights) unless trainer.refSync moved it, in which case the run checkpoint holds it.
      const from = syncedReference(c, resumeDir, id) ?? start;
      const own = models[id] as TinyLM;
      references[id] = from
        ? ((await loadModel(from)).model as TinyLM)
        : new TinyLM(own.config, resumeDir ? undefined : own.weights);
    }
  }
  const shared = tokenizer ?? new CharTokenizer();
  for (const [id, m] of Object.entries(models)) if (m.kind === 'tinylm') tokenizers[id] = shared;
  return { models, references, tokenizer: shared, tokenizers, attachments };
}

type ModelSpec = ExperimentConfig['models'][string];

/** A game policy: fresh from its config and the arena's sizes, or from a checkpoint whose sizes must match them. */
async function loadMlp(
  c: ExperimentConfig,
  id: string,
  from: string | undefined,
  resumeDir: string | undefined,
  o: { freshOptimizer?: boolean; features?: { inputSize: number; numActions: number } },
): Promise<{ model: MlpPolicy; attachments?: Record<string, Uint8Array> }> {
  const f = o.features;
  if (!f)
    throw new Error(
      `models.${id}: kind 'mlp' reads feature vectors, and arena '${c.arena.kind}' gives text only (a game arena gives numbers)`,
    );
  const spec = c.models[id];
  if (!from) {
    const layers = spec.mlp ?? { hiddenSizes: [64, 64], activation: 'tanh' as const };
    return { model: new MlpPolicy({ ...f, ...layers, seed: c.seed }) };
  }
  const source = resumeDir ? join(resumeDir, id) : from;
  const loaded = await loadModel(source, resumeDir && o.freshOptimizer ? { ignore: OPTIMIZER_FILES } : {});
  if (loaded.kind !== 'mlp') throw new Error(`models.${id}: ${source} holds a ${loaded.kind}, not an mlp`);
  const got = loaded.model.config;
  if (got.inputSize !== f.inputSize || got.numActions !== f.numActions) {
    loaded.model.dispose();
    throw new Error(
      `models.${id}: ${source} reads ${got.inputSize} features and scores ${got.numActions} actions; the arena has ${f.inputSize} and ${f.numActions}`,
    );
  }
  return { model: loaded.model, attachments: resumeDir ? loaded.attachments : undefined };
}

/**
 * The Hugging Face bases of one run: a base is loaded once per directory and shared by every
 * model that trains an adapter on it (one copy in memory, one adapter per model); a model that
 * fine-tunes the base fully gets a copy of its own.
 */
class HfBases {
  private readonly shared = new Map<string, HfCausalLM>();
  /** each base directory's sha256, read once per run (a full copy and its reference share it) */
  private readonly hashes = new Map<string, string>();

  /** `seed`: the run's, so a new adapter's initialisation follows it */
  constructor(private readonly seed: number) {}

  private base(path: string, own: boolean): HfCausalLM {
    const key = resolve(path);
    if (own) return this.hashed(HfCausalLM.load(path), key);
    // a shared base is frozen (adapters train on it): its matrices may stay outside the heap
    if (!this.shared.has(key)) this.shared.set(key, this.hashed(HfCausalLM.load(path, { frozen: true }), key));
    return this.shared.get(key)!;
  }

  private hashed(m: HfCausalLM, key: string): HfCausalLM {
    if (!this.hashes.has(key)) this.hashes.set(key, baseSha256(key));
    m.sha256 = this.hashes.get(key);
    return m;
  }

  async load(
    id: string,
    spec: ModelSpec,
    resumeDir: string | undefined,
    o: { freshOptimizer?: boolean },
  ): Promise<{ policy: HfPolicy; tokenizer: Tokenizer; attachments?: Record<string, Uint8Array> }> {
    const path = spec.path!;
    const tokenizer = loadHfTokenizer(path);
    const full = !spec.lora && !spec.adapter;
    if (resumeDir) {
      const got = await loadHfPolicy(join(resumeDir, id), {
        base: this.base(path, full),
        ...(o.freshOptimizer ? { ignore: OPTIMIZER_FILES } : {}),
      });
      return { policy: got.policy, tokenizer, attachments: got.attachments };
    }
    const base = this.base(path, full);
    if (spec.adapter) return { policy: new HfPolicy(base, LoraAdapter.load(spec.adapter, base.config)), tokenizer };
    if (spec.lora)
      return { policy: new HfPolicy(base, new LoraAdapter(base.config, spec.lora, this.adapterSeed(id))), tokenizer };
    return { policy: new HfPolicy(base), tokenizer };
  }

  private adapterSeed(id: string): number {
    return hashSeed(this.seed, 0, `adapter-${id}`);
  }

  /**
   * The KL reference: the starting policy, frozen (or, resumed with trainer.refSync, the one the
   * checkpoint saved). An adapter's is a copy of its adapter on the shared base; a full model's,
   * the base itself loaded again.
   */
  async reference(id: string, spec: ModelSpec, policy: HfPolicy, synced?: string): Promise<HfPolicy> {
    if (synced)
      return (await loadHfPolicy(synced, { base: policy.adapter ? policy.base : this.base(spec.path!, true) })).policy;
    // the starting adapter, copied (a resumed run's reference is the adapter it starts from too, unless refSync saved one)
    if (spec.adapter) return new HfPolicy(policy.base, LoraAdapter.load(spec.adapter, policy.base.config));
    if (policy.adapter)
      return new HfPolicy(policy.base, new LoraAdapter(policy.base.config, spec.lora!, this.adapterSeed(id)));
    return new HfPolicy(this.base(spec.path!, true));
  }
}

/** The architecture of a model the config builds from scratch (no checkpoint). */
export function freshConfig(c: ExperimentConfig, id: string, tokenizer: CharTokenizer): TinyLMConfig {
  return {
    vocabSize: tokenizer.size,
    dModel: 128,
    nHeads: 4,
    nLayers: 2,
    context: 32,
    seed: c.seed,
    ...c.models[id].config,
  } as TinyLMConfig;
}

/** The reference a resumed run with trainer.refSync reads (its checkpoint saved it), or undefined. */
function syncedReference(c: ExperimentConfig, resumeDir: string | undefined, id: string): string | undefined {
  const synced = resumeDir && c.trainer.refSync ? join(resumeDir, referenceDirName(id)) : undefined;
  if (synced && !existsSync(synced))
    throw new Error(
      `models.${id}: ${synced} is missing; a run with trainer.refSync saves its reference in every checkpoint`,
    );
  return synced;
}

/** Where a run checkpoint keeps the reference of model `id` when trainer.refSync moves it. */
function referenceDirName(id: string): string {
  return `${id}.reference`;
}

/** Saves each reference beside its model in a run checkpoint, for a run whose references move. */
export async function saveReferences(
  dir: string,
  references: Record<string, TextModel>,
  tokenizer: CharTokenizer,
  extra: Record<string, unknown>,
): Promise<void> {
  for (const [id, m] of Object.entries(references)) {
    if (m.kind === 'hf') await saveHfPolicy(join(dir, referenceDirName(id)), m, extra);
    else await saveModel(join(dir, referenceDirName(id)), m, tokenizer, extra);
  }
}

/** Saves each model in `dir/<id>` with its attachments (its optimizer state), each checkpoint whole. */
export async function saveModels(
  dir: string,
  models: Record<string, RunModel>,
  tokenizer: CharTokenizer,
  extra: Record<string, unknown>,
  attachments: Record<string, Attachments> = {},
): Promise<void> {
  for (const [id, m] of Object.entries(models)) {
    if (m.kind === 'hf') await saveHfPolicy(join(dir, id), m, extra, attachments[id]);
    else await saveModel(join(dir, id), m, tokenizer, extra, attachments[id]);
  }
}

function checkSame(a: CharTokenizer | undefined, b: CharTokenizer, id: string): CharTokenizer {
  if (a && JSON.stringify(a.spec) !== JSON.stringify(b.spec))
    throw new Error(
      `models.${id}: its tokenizer differs from the other models'; roles on different models must share one`,
    );
  return a ?? b;
}

/**
 * The models that read and write text, TinyLM and Hugging Face, not game MLPs: what worker-thread
 * replicas (src/parallel) copy and rollout workers (src/distributed) play, their weights by version.
 */
export function textModels(models: Readonly<Record<string, RunModel>>): Record<string, TextModel> {
  return Object.fromEntries(Object.entries(models).filter((e): e is [string, TextModel] => e[1].kind !== 'mlp'));
}
