import { z } from 'zod';
import { initBackend, describeBackend, BACKEND_CHOICES, type BackendChoice } from '../backend/index.js';
import { rm } from 'node:fs/promises';
import { checkReplaceable } from '../models/checkpoint.js';
import { saveModel } from '../models/store.js';
import { SupervisedTrainer } from '../models/supervised.js';
import { TinyLM } from '../models/tinylm.js';
import { disjointSplit, tasksJsonl } from '../tasks/jsonl.js';
import { taskFamily } from '../tasks/index.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { evaluateSolver, type EvalResult } from './evaluate.js';

/** `coevolve pretrain CONFIG`: makes a base solver by supervised training on generated tasks. */
export const PretrainSchema = z.strictObject({
  /** name of the base model */
  name: z.string(),
  /** seed of the corpus, the initialisation and the batch order */
  seed: z.number().int().default(0),
  backend: z.enum(BACKEND_CHOICES as unknown as [BackendChoice, ...BackendChoice[]]).default('auto'),
  /** the task family and difficulty the corpus is drawn from */
  task: z.strictObject({ family: z.string(), difficulty: z.record(z.string(), z.unknown()).default({}) }),
  /** corpus size and a held-out set (no prompt shared with the corpus) */
  corpus: z.strictObject({ train: z.number().int().positive(), heldOut: z.number().int().positive() }),
  /** TinyLM shape; vocabSize comes from the tokenizer */
  model: z.strictObject({ dModel: z.number().int().positive(), nHeads: z.number().int().positive(), nLayers: z.number().int().positive(), context: z.number().int().positive() }),
  train: z.strictObject({ steps: z.number().int().positive(), batchSize: z.number().int().positive(), lr: z.number().positive() }),
  /** check held-out greedy accuracy this often, and stop once it reaches `stopAtAccuracy` (a deliberately partial base) */
  evalEvery: z.number().int().positive().default(50),
  stopAtAccuracy: z.number().min(0).max(1).default(1),
  /** answers longer than this are cut (the solver's maxNewTokens) */
  maxNewTokens: z.number().int().positive().default(8),
  /** where the checkpoint goes */
  out: z.string(),
});
export type PretrainConfig = z.output<typeof PretrainSchema>;

export interface PretrainResult { checkpoint: string; steps: number; heldOut: EvalResult; seconds: number }

/**
 * Trains and saves the base. The `out:` folder is checked first: a checkpoint there is
 * replaced, anything else is refused before any training, unless `overwrite` (then the
 * folder is deleted and made anew).
 */
export async function pretrain(config: PretrainConfig, o: { overwrite?: boolean; log?: (line: string) => void } = {}): Promise<PretrainResult> {
  const log = o.log ?? console.error;
  if (!o.overwrite) {
    try {
      checkReplaceable(config.out);
    } catch (e) {
      throw new Error(`out: ${(e as Error).message}; pass --overwrite to replace the folder`);
    }
  }
  const family = taskFamily(config.task.family);
  const difficulty = family.validate(config.task.difficulty);
  log(describeBackend(await initBackend(config.backend)));
  const tokenizer = new CharTokenizer();
  const { train, test } = disjointSplit(family, difficulty, config.corpus.train, config.corpus.heldOut, config.seed);
  const examples = train.map((t) => ({ prompt: tokenizer.prompt(t.prompt, 'solver'), completion: [...tokenizer.encode(t.target ?? t.answer!), tokenizer.eos] }));
  const model = new TinyLM({ ...config.model, vocabSize: tokenizer.size, seed: config.seed });
  const t0 = performance.now();
  let steps = 0;
  let heldOut = await evaluateSolver(model, tokenizer, family, test, { samples: 0, maxNewTokens: config.maxNewTokens });
  const trainer = new SupervisedTrainer(model, examples, { batchSize: config.train.batchSize, lr: config.train.lr, seed: config.seed });
  while (steps < config.train.steps && heldOut.pass1 < config.stopAtAccuracy) {
    const losses: number[] = [];
    for (const end = Math.min(steps + config.evalEvery, config.train.steps); steps < end; steps++) losses.push(trainer.step());
    heldOut = await evaluateSolver(model, tokenizer, family, test, { samples: 0, maxNewTokens: config.maxNewTokens });
    log(`step ${steps} loss=${losses[losses.length - 1].toFixed(4)} heldout_pass1=${heldOut.pass1.toFixed(3)} ${((performance.now() - t0) / 1000).toFixed(0)}s`);
  }
  trainer.dispose();
  const seconds = (performance.now() - t0) / 1000;
  if (o.overwrite) await rm(config.out, { recursive: true, force: true });
  // The held-out prompts were never trained on: later RL runs evaluate on them.
  await saveModel(config.out, model, tokenizer, { name: config.name, steps, heldOutPass1: heldOut.pass1, task: config.task }, { 'heldout.jsonl': tasksJsonl(test) });
  model.dispose();
  return { checkpoint: config.out, steps, heldOut, seconds };
}
