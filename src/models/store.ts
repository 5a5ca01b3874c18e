import * as tf from '@tensorflow/tfjs';
import { CharTokenizer } from '../tokenizer/index.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoint.js';
import { MlpPolicy, mlpWeightShapes, validateMlpConfig, type MlpConfig } from './mlp.js';
import { TinyLM, validateConfig, weightShapes, type TinyLMConfig } from './tinylm.js';

export type LoadedModel =
  | { kind: 'tinylm'; model: TinyLM; tokenizer?: CharTokenizer; extra: Record<string, unknown> }
  | { kind: 'mlp'; model: MlpPolicy; extra: Record<string, unknown> };

/** Saves a TinyLM or MlpPolicy with its config (and tokenizer) beside it. */
export async function saveModel(dir: string, model: TinyLM | MlpPolicy, tokenizer?: CharTokenizer, extra?: Record<string, unknown>): Promise<void> {
  await saveCheckpoint(dir, { kind: model.kind, config: model.config, tokenizer: tokenizer?.spec, extra }, model.weights);
}

function shapesFor(kind: string, config: unknown): Record<string, number[]> {
  if (kind === 'tinylm') {
    validateConfig(config as TinyLMConfig);
    return weightShapes(config as TinyLMConfig);
  }
  if (kind === 'mlp') {
    validateMlpConfig(config as MlpConfig);
    return mlpWeightShapes(config as MlpConfig);
  }
  throw new Error(`checkpoint: unknown model kind '${kind}'; known: tinylm, mlp`);
}

/** Loads a checkpoint saved by saveModel, refusing a corrupt or mismatched one. */
export async function loadModel(dir: string): Promise<LoadedModel> {
  const { meta, weights } = await loadCheckpoint(dir, shapesFor);
  try {
    if (meta.kind === 'tinylm') {
      const tokenizer = meta.tokenizer ? CharTokenizer.fromSpec(meta.tokenizer) : undefined;
      const config = meta.config as TinyLMConfig;
      if (tokenizer && tokenizer.size > config.vocabSize) {
        throw new Error(`checkpoint: tokenizer has ${tokenizer.size} tokens but the model's vocabSize is ${config.vocabSize}`);
      }
      return { kind: 'tinylm', model: new TinyLM(config, weights), tokenizer, extra: meta.extra ?? {} };
    }
    return { kind: 'mlp', model: new MlpPolicy(meta.config as MlpConfig, weights), extra: meta.extra ?? {} };
  } finally {
    tf.dispose(Object.values(weights));
  }
}
