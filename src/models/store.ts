import * as tf from '@tensorflow/tfjs';
import { CharTokenizer } from '../tokenizer/index.js';
import { loadCheckpoint, saveCheckpoint, type Attachments, type LoadOptions } from './checkpoint.js';
import { MlpPolicy, mlpWeightShapes, validateMlpConfig, type MlpConfig } from './mlp.js';
import { TinyLM, validateConfig, weightShapes, type TinyLMConfig } from './tinylm.js';

/** the files saved with the model (optimizer state, say), checked with it */
type Attached = { attachments: Record<string, Uint8Array> };
export type LoadedModel =
  | ({ kind: 'tinylm'; model: TinyLM; tokenizer?: CharTokenizer; extra: Record<string, unknown> } & Attached)
  | ({ kind: 'mlp'; model: MlpPolicy; extra: Record<string, unknown> } & Attached);

/** Saves a TinyLM or MlpPolicy with its config (and tokenizer) beside it, plus any attachments. */
export async function saveModel(
  dir: string,
  model: TinyLM | MlpPolicy,
  tokenizer?: CharTokenizer,
  extra?: Record<string, unknown>,
  attachments?: Attachments,
): Promise<void> {
  await saveCheckpoint(
    dir,
    { kind: model.kind, config: model.config, tokenizer: tokenizer?.spec, extra },
    model.weights,
    attachments,
  );
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
export async function loadModel(dir: string, o: LoadOptions = {}): Promise<LoadedModel> {
  const { meta, weights, attachments } = await loadCheckpoint(dir, shapesFor, o);
  try {
    if (meta.kind === 'tinylm') {
      const tokenizer = meta.tokenizer ? CharTokenizer.fromSpec(meta.tokenizer) : undefined;
      const config = meta.config as TinyLMConfig;
      if (tokenizer && tokenizer.size > config.vocabSize) {
        throw new Error(
          `checkpoint: tokenizer has ${tokenizer.size} tokens but the model's vocabSize is ${config.vocabSize}`,
        );
      }
      return { kind: 'tinylm', model: new TinyLM(config, weights), tokenizer, extra: meta.extra ?? {}, attachments };
    }
    return {
      kind: 'mlp',
      model: new MlpPolicy(meta.config as MlpConfig, weights),
      extra: meta.extra ?? {},
      attachments,
    };
  } finally {
    tf.dispose(Object.values(weights));
  }
}
