import type { Attachments } from '../models/checkpoint.js';
import { loadModel, saveModel } from '../models/store.js';
import { OPTIMIZER_FILES } from '../rl/optimizer-state.js';
import { TinyLM, type TinyLMConfig } from '../models/tinylm.js';
import type { ExperimentConfig } from '../config/schema.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface LoadedModels {
  models: Record<string, TinyLM>;
  references: Record<string, TinyLM>;
  tokenizer: CharTokenizer;
  /** files saved with each model in `resumeDir` (its optimizer state), checked with it */
  attachments: Record<string, Record<string, Uint8Array>>;
}

/**
 * Builds every model of the config: from `resumeDir` (a run checkpoint) when resuming,
 * else from its own checkpoint or fresh from its config. A model with `reference: true`
 * also gets a frozen copy of its starting weights for the KL term. All models must share
 * one tokenizer, since roles on different models exchange text.
 */
export async function loadModels(c: ExperimentConfig, resumeDir?: string, o: { freshOptimizer?: boolean } = {}): Promise<LoadedModels> {
  const models: Record<string, TinyLM> = {};
  const references: Record<string, TinyLM> = {};
  const attachments: Record<string, Record<string, Uint8Array>> = {};
  let tokenizer: CharTokenizer | undefined;
  for (const [id, spec] of Object.entries(c.models)) {
    if (spec.kind === 'remote') continue; // served elsewhere: no weights here
    const start = spec.checkpoint;
    const source = resumeDir ? join(resumeDir, id) : start;
    if (source) {
      // a fresh optimizer does not read the saved state, so a missing or broken one is no obstacle
      const loaded = await loadModel(source, resumeDir && o.freshOptimizer ? { ignore: OPTIMIZER_FILES } : {});
      if (loaded.kind !== 'tinylm') throw new Error(`models.${id}: ${source} holds a ${loaded.kind}, not a tinylm`);
      for (const [k, v] of Object.entries(spec.config ?? {})) {
        if (k !== 'seed' && (loaded.model.config as unknown as Record<string, unknown>)[k] !== v) {
          throw new Error(`models.${id}.config.${k}: ${String(v)} disagrees with ${source} (${String((loaded.model.config as unknown as Record<string, unknown>)[k])})`);
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
      const synced = resumeDir && c.trainer.refSync ? join(resumeDir, referenceDirName(id)) : undefined;
      if (synced && !existsSync(synced)) throw new Error(`models.${id}: ${synced} is missing; a run with trainer.refSync saves its reference in every checkpoint`);
      const from = synced ?? start;
      references[id] = from ? ((await loadModel(from)).model as TinyLM) : new TinyLM(models[id].config, resumeDir ? undefined : models[id].weights);
    }
  }
  return { models, references, tokenizer: tokenizer!, attachments };
}

/** The architecture of a model the config builds from scratch (no checkpoint). */
export function freshConfig(c: ExperimentConfig, id: string, tokenizer: CharTokenizer): TinyLMConfig {
  return { vocabSize: tokenizer.size, dModel: 128, nHeads: 4, nLayers: 2, context: 32, seed: c.seed, ...c.models[id].config } as TinyLMConfig;
}

/** Where a run checkpoint keeps the reference of model `id` when trainer.refSync moves it. */
function referenceDirName(id: string): string {
  return `${id}.reference`;
}

/** Saves each reference beside its model in a run checkpoint, for a run whose references move. */
export async function saveReferences(dir: string, references: Record<string, TinyLM>, tokenizer: CharTokenizer, extra: Record<string, unknown>): Promise<void> {
  for (const [id, m] of Object.entries(references)) await saveModel(join(dir, referenceDirName(id)), m, tokenizer, extra);
}

/** Saves each model in `dir/<id>` with its attachments (its optimizer state), each checkpoint whole. */
export async function saveModels(dir: string, models: Record<string, TinyLM>, tokenizer: CharTokenizer, extra: Record<string, unknown>, attachments: Record<string, Attachments> = {}): Promise<void> {
  for (const [id, m] of Object.entries(models)) await saveModel(join(dir, id), m, tokenizer, extra, attachments[id]);
}

function checkSame(a: CharTokenizer | undefined, b: CharTokenizer, id: string): CharTokenizer {
  if (a && JSON.stringify(a.spec) !== JSON.stringify(b.spec)) throw new Error(`models.${id}: its tokenizer differs from the other models'; roles on different models must share one`);
  return a ?? b;
}
