import { dirname, join } from 'node:path';
import type { ExperimentInput } from '../../src/config/schema.js';
import { TEST_BACKEND } from '../needs.js';

/** A tiny experiment that runs in well under a second per iteration on cpu or wasm. */
export function tinyConfig(outDir: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    name: 'tiny',
    seed: 3,
    backend: TEST_BACKEND,
    iterations: 4,
    outDir,
    models: { main: { config: { dModel: 16, nHeads: 2, nLayers: 1, context: 24 } } },
    roles: { solver: { kind: 'solver', model: 'main' } },
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 1, operands: 2, operators: '+' },
      train: { source: 'generate', count: 40 },
      eval: { source: 'generate', count: 8 },
      perIteration: 4,
    },
    arena: { groupSize: 4, maxNewTokens: 3 },
    judges: [{ kind: 'verifier' }],
    trainer: { lr: 1e-3 },
    eval: { every: 2, samples: 2 },
    checkpointEvery: 2,
    ...over,
  };
}

/** A tiny base's pretrain config (as written in YAML): two steps on one-digit sums, saved to `out`. */
export function tinyPretrainInput(out: string) {
  return {
    name: 'p',
    seed: 2,
    backend: TEST_BACKEND,
    task: { family: 'arithmetic', difficulty: { digits: 1, operands: 2, operators: '+' } },
    corpus: { train: 30, heldOut: 6 },
    model: { dModel: 8, nHeads: 2, nLayers: 1, context: 12 },
    train: { steps: 2, batchSize: 4, lr: 0.01 },
    evalEvery: 1,
    maxNewTokens: 3,
    out,
    outDir: join(dirname(out), 'runs'),
  };
}

/**
 * A solver on a Hugging Face directory `base` (a LoRA adapter of rank 2 unless `over.models` says
 * otherwise): two iterations of 1-digit sums in one thread, evaluated at the end.
 */
export function hfSolverConfig(outDir: string, base: string, over: Partial<ExperimentInput> = {}): ExperimentInput {
  return {
    name: 'hf',
    seed: 3,
    backend: TEST_BACKEND,
    workers: 1,
    iterations: 2,
    outDir,
    checkpointEvery: 1,
    models: { main: { kind: 'hf', path: base, lora: { r: 2, alpha: 4 } } },
    roles: { solver: { kind: 'solver', model: 'main' } },
    tasks: {
      family: 'arithmetic',
      difficulty: { digits: 1, operands: 2, operators: '+' },
      train: { source: 'generate', count: 40 },
      eval: { source: 'generate', count: 4 },
      perIteration: 4,
    },
    arena: { groupSize: 4, maxNewTokens: 4, temperature: 1 },
    judges: [{ kind: 'verifier' }],
    trainer: { lr: 1e-3 },
    eval: { every: 2, samples: 2 },
    ...over,
  } as ExperimentInput;
}
