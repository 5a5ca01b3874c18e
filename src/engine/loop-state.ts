import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskBuffer, type BufferedTask } from './task-buffer.js';
import type { ExperimentConfig } from '../config/schema.js';
import { KlController } from '../rl/kl-reward.js';
import { RoleBaseline, type RoleBaselineState } from '../rl/role-baseline.js';
import { StateBaseline, type StateBaselineState } from '../rl/state-baseline.js';
import type { OpponentsState } from './opponents.js';

/** What the loop carries from one iteration to the next besides the models: plain JSON in each checkpoint. */
export interface LoopState {
  /** each role's KL-reward controller (its β moves when adaptive) */
  controllers: Record<string, KlController>;
  buffer: TaskBuffer;
  /** each role's moving baseline for the 'rae' advantage (SPIRAL's), read before each update */
  baselines: RoleBaseline;
  /** the 'infostate' advantage's baseline per decision point */
  states: StateBaseline;
  /** what evaluators that remember between runs keep, by evaluator name (an Elo pool's snapshots) */
  evaluators: Record<string, unknown>;
  /** what each game policy's learner keeps (its magnet, its critic), by model id */
  learners: Record<string, unknown>;
  /** the opponent pool's records and draws (its snapshots' weights are saved beside, in `opponents/`) */
  opponents?: OpponentsState;
  /** what the arena keeps across iterations (its `carry`: a bank of tasks), plain JSON */
  carried?: unknown;
}

const FILE = 'loop.json';

/** A new run's state: controllers at their configured β, an empty buffer. */
export function freshLoopState(c: ExperimentConfig): LoopState {
  const controllers: Record<string, KlController> = {};
  for (const [id, r] of Object.entries(c.roles)) if (r.klReward) controllers[id] = new KlController(r.klReward);
  return {
    controllers,
    buffer: new TaskBuffer(c.buffer.size),
    baselines: new RoleBaseline(c.trainer.raeDecay ?? 0.95),
    states: new StateBaseline(c.trainer.critic.decay),
    evaluators: {},
    learners: {},
  };
}

/** The state saved in a run checkpoint; a checkpoint without it is refused, naming the file. */
export function loadLoopState(dir: string, c: ExperimentConfig): LoopState {
  const path = join(dir, FILE);
  if (!existsSync(path))
    throw new Error(`${path} is missing: a run checkpoint keeps the loop's state (KL controllers, task buffer) there`);
  let saved: {
    controllers?: Record<string, number>;
    buffer?: BufferedTask[];
    baselines?: RoleBaselineState;
    states?: StateBaselineState;
    evaluators?: Record<string, unknown>;
    learners?: Record<string, unknown>;
    opponents?: OpponentsState;
    carried?: unknown;
  };
  try {
    saved = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path}: cannot read: ${(e as Error).message}`);
  }
  const state = freshLoopState(c);
  for (const [id, ctrl] of Object.entries(state.controllers)) {
    const v = saved.controllers?.[id];
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new Error(`${path}: no KL controller value for role '${id}'`);
    ctrl.value = v;
  }
  // checkpoints written before 'rae' existed have no baselines
  const b = saved.baselines;
  if (
    b &&
    (typeof b.decay !== 'number' ||
      Object.values(b.baselines ?? {}).some((v) => typeof v !== 'number' || !Number.isFinite(v)))
  )
    throw new Error(`${path}: the 'rae' baselines are malformed`);
  return {
    ...state,
    buffer: TaskBuffer.from(c.buffer.size, saved.buffer ?? []),
    baselines: b ? RoleBaseline.fromJSON(b) : state.baselines,
    states: new StateBaseline(c.trainer.critic.decay, saved.states ?? []),
    evaluators: saved.evaluators ?? {},
    learners: saved.learners ?? {},
    opponents: saved.opponents,
    carried: saved.carried,
  };
}

/** Writes the state into a checkpoint folder, atomically (before the checkpoint is recorded). */
export function saveLoopState(dir: string, s: LoopState): void {
  const body = {
    controllers: Object.fromEntries(Object.entries(s.controllers).map(([id, k]) => [id, k.value])),
    buffer: s.buffer.entries(),
    baselines: s.baselines.toJSON(),
    states: s.states.toJSON(),
    evaluators: s.evaluators,
    learners: s.learners,
    opponents: s.opponents,
    carried: s.carried,
  };
  const tmp = join(dir, `${FILE}.tmp-${process.pid}`);
  writeFileSync(tmp, JSON.stringify(body));
  renameSync(tmp, join(dir, FILE));
}
