/**
 * A pretrain run's checkpoint: the trained variables, Adam's state and the trainer's place in
 * its example order, in one hashed checkpoint (models/checkpoint.ts). The model is rebuilt
 * from the config as at the start (the same seed, the same `init:`), so the variables are
 * saved by their position in `variables()`, and a resume continues the same optimisation.
 */
import * as tf from '@tensorflow/tfjs';
import { loadCheckpoint, saveCheckpoint } from '../models/checkpoint.js';
import type { SupervisedTrainer, TrainerPosition } from '../rl/supervised.js';
import type { Policy } from '../models/types.js';
import { encodeOptimizerState, restoreOptimizerState } from '../rl/optimizer-state.js';
import type { BaseEvaluation } from './evaluate.js';

const KIND = 'pretrain-state';
const TRAINER_JSON = 'trainer.json';

/** What a pretrain checkpoint keeps beside the weights. */
export interface PretrainProgress {
  position: TrainerPosition;
  /** the last evaluation, so a resume that stops at once still writes the base with it */
  evaluation: BaseEvaluation;
  /** training seconds so far, over every process that trained the run */
  seconds: number;
}

const nameOf = (i: number) => `v${String(i).padStart(4, '0')}`;

/** Saves the state of `trainer` on `model` into `dir` (replaced whole if it is a checkpoint). */
export async function savePretrainState(
  dir: string,
  model: Policy,
  trainer: SupervisedTrainer,
  progress: Omit<PretrainProgress, 'position'>,
): Promise<void> {
  const vars = model.variables();
  const weights = Object.fromEntries(vars.map((v, i) => [nameOf(i), v]));
  const state: PretrainProgress = { ...progress, position: trainer.position };
  await saveCheckpoint(dir, { kind: KIND, config: { variables: vars.map((v) => v.shape) } }, weights, {
    ...(await encodeOptimizerState(trainer.optimizer)),
    [TRAINER_JSON]: JSON.stringify(state),
  });
}

/**
 * Restores a state saved by savePretrainState into `model` (built from the same config) and
 * `trainer`; a checkpoint of another model (its variables' shapes differ) is refused naming it.
 */
export async function loadPretrainState(
  dir: string,
  model: Policy,
  trainer: SupervisedTrainer,
): Promise<PretrainProgress> {
  const vars = model.variables();
  const { weights, attachments } = await loadCheckpoint(dir, (kind) => {
    if (kind !== KIND) throw new Error(`pretrain: ${dir} holds a ${kind} checkpoint, not a pretrain state`);
    return Object.fromEntries(vars.map((v, i) => [nameOf(i), v.shape]));
  });
  try {
    vars.forEach((v, i) => v.assign(weights[nameOf(i)]));
  } finally {
    tf.dispose(Object.values(weights));
  }
  await restoreOptimizerState(dir, attachments, trainer.optimizer);
  if (!attachments[TRAINER_JSON]) throw new Error(`pretrain: ${dir} holds no ${TRAINER_JSON}`);
  const state = JSON.parse(new TextDecoder().decode(attachments[TRAINER_JSON])) as PretrainProgress;
  trainer.restorePosition(state.position);
  return state;
}
