/**
 * Where a pretrain's product goes: the base in its `out:` folder (a TinyLM checkpoint, or a
 * Hugging Face directory with `coevolve-pretrain.json`), with its held-out sets beside it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { checkReplaceable } from '../models/checkpoint.js';
import { writeHfDirectory } from '../models/hf/create.js';
import type { HfCausalLM } from '../models/hf/model.js';
import { saveModel } from '../models/store.js';
import type { TinyLM } from '../models/tinylm.js';
import { tasksJsonl } from '../tasks/jsonl.js';
import type { CharTokenizer } from '../tokenizer/index.js';
import type { PretrainCorpus } from './corpus.js';
import type { BaseEvaluation } from './evaluate.js';
import type { PretrainConfig } from './schema.js';

/** The file a pretrained Hugging Face base records its pretraining in (steps, held-out accuracy), beside the model's own files. */
export const PRETRAIN_RECORD = 'coevolve-pretrain.json';

/** Throws, before any work, unless `out:` may take the base: absent, empty, or a base pretrain wrote (or `overwrite`). */
export function checkOut(config: PretrainConfig, overwrite = false): void {
  if (overwrite) return;
  try {
    if (config.architecture) checkHfReplaceable(config.out);
    else checkReplaceable(config.out);
  } catch (e) {
    throw new Error(`out: ${(e as Error).message}; pass --overwrite to replace the folder`);
  }
}

function checkHfReplaceable(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0 && !existsSync(join(dir, PRETRAIN_RECORD)))
    throw new Error(`${dir} holds files that are not a base pretrain wrote`);
}

/** The record a base carries: its config's name, task and corpora, the steps taken and how it measured. */
export function baseRecord(config: PretrainConfig, steps: number, e: BaseEvaluation): Record<string, unknown> {
  const { heldOut, sets, proposer } = e;
  const stats = proposer && { samples: proposer.samples, valid: proposer.valid, cells: proposer.cells };
  return {
    name: config.name,
    steps,
    ...(heldOut && { heldOutPass1: heldOut.pass1 }),
    task: config.task,
    ...(config.mixture && { mixture: config.mixture }),
    ...(config.proposer && { proposer: { ...config.proposer, ...stats } }),
    ...(config.judge && { judge: config.judge, from: config.init }),
    ...(config.critic && { critic: { ...config.critic, heldOutAccuracy: e.critic }, from: config.init }),
    ...(config.memory && { memory: { ...config.memory, heldOutValid: e.memory } }),
    ...(config.game && { game: { ...config.game, ...e.game } }),
    ...(config.flow && { flow: { ...config.flow, heldOutValid: e.flow } }),
    ...(config.verdicts && { verdicts: { ...config.verdicts, heldOutAccuracy: e.verdicts } }),
    ...(config.bank && { bank: { ...config.bank, heldOutRightOp: e.bank } }),
    ...(config.init !== undefined && !config.judge && !config.critic && { from: config.init }),
    ...(Object.keys(sets).length > 0 && { heldOutSets: sets }),
  };
}

/** What writeBase writes: a TinyLM with its tokenizer, or a new Hugging Face model with its config.json. */
export type TrainedBase =
  | { kind: 'tinylm'; model: TinyLM; tokenizer: CharTokenizer }
  | { kind: 'hf'; model: HfCausalLM; raw: Record<string, unknown>; tokenizerFrom: string };

/** Writes the base to `out:` (replacing it when `overwrite`), with the held-out sets it was measured on. */
export async function writeBase(
  config: PretrainConfig,
  base: TrainedBase,
  record: Record<string, unknown>,
  corpus: PretrainCorpus,
  overwrite = false,
): Promise<void> {
  if (overwrite) await rm(config.out, { recursive: true, force: true });
  // The held-out prompts were never trained on: later RL runs evaluate on them.
  const attachments = Object.fromEntries([
    ['heldout.jsonl', tasksJsonl(corpus.test)],
    ...Object.entries(corpus.sets).map(([name, tasks]) => [`${name}.jsonl`, tasksJsonl(tasks)]),
  ]);
  if (base.kind === 'hf')
    writeHfDirectory(config.out, base.model, base.raw, base.tokenizerFrom, {
      ...attachments,
      [PRETRAIN_RECORD]: JSON.stringify(record, null, 2),
    });
  else await saveModel(config.out, base.model, base.tokenizer, record, attachments);
}
