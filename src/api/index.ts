/**
 * coevolve's public API: `import { … } from 'coevolve'`. What a researcher extends
 * (arenas, judges, roles, task families, evaluators, through `define*`), what runs an
 * experiment (`runExperiment`, `loadConfig`), and the plain-JSON types they pass around.
 * Everything else in the package is internal and may change.
 *
 * It only re-exports, and nothing of roles/, arenas/, judges/ or memory/: the contracts a kind
 * implements are in src/core, and the built-in kinds are reached by name through the registry
 * of kinds (src/registry.ts), src/'s one composition point (test/layout.test.ts).
 */

// extending
export {
  defineArena,
  defineEvaluator,
  defineJudge,
  defineRole,
  defineTaskFamily,
  isDefinition,
  type Concept,
  type Definition,
  type RewardContext,
  type RewardJudge,
  type RoleFactory,
  type RoleSpec,
  type OptionsSchema,
} from './define.js';
export { loadPlugins, type PluginDefinition } from '../plugins/load.js';

// running
export { runExperiment, type ExperimentOptions, type ExperimentResult } from '../engine/experiment.js';
export { ConfigError, loadConfig, parseConfig, type ConfigIssue } from '../config/load.js';
export type { ExperimentConfig, ExperimentInput } from '../config/schema.js';
export type { MetricsRow } from '../store/run.js';

// what arenas, roles and judges exchange (plain JSON)
export type { Action, BatchRewards, CompareScope, Episode, Reward, RoleId, Task, Turn } from '../core/types.js';
export type { ActOptions, Arena, ArenaContext, ArenaFactory, EpisodeEnd } from '../core/arena.js';
export type { AnswerParser, Observation, Role } from '../core/role.js';
export type { Judge, JudgeDeps, JudgeFactory, VerifyFn } from '../core/judge.js';
export type { ParsedAnswer, TaskFamily } from '../core/task-family.js';
export type { EvalContext, Evaluator, EvaluatorFactory, EvaluatorSpec } from '../engine/evaluators/types.js';

// helpers for writing them
export { fromRun } from '../core/operators/from-run.js';
export { parseOptions } from '../config/issues.js';
export { invalid, valid } from '../core/role.js';
export { Rng } from '../util/rng.js';
export { arithmetic, strings } from '../tasks/index.js';
