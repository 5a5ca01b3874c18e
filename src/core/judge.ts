/**
 * The judge contract. A judge is a reward source: a pure function from the iteration's BATCH
 * of episodes to one reward per turn. It sees the whole batch because some rewards are about
 * other turns: a proposer's learnability is the solver's success in its episode, a repetition
 * penalty compares proposals across the batch, a majority vote pools a comparison group
 * (see src/core/groups.ts). Judges read plain JSON only (the model already attached per-token
 * statistics to each turn) and never run, parse as code, or otherwise execute model output.
 */
import type { Episode, BatchRewards, RoleId, Task } from './types.js';

/**
 * A reward source.
 *
 * `score(batch)` returns `rewards` with `rewards[e][t]` for `batch[e].turns[t]` (same shape
 * as the batch). A `null` reward means the judge abstains on that turn: turns of roles the
 * judge is not configured for are always `null`. `score([])` returns `[]`. Group statistics
 * run over each turn's comparison group, never across groups. `score` does not mutate its input.
 */
export interface Judge {
  /** for logs, metrics and config; defaults to the judge kind, e.g. 'majority' */
  readonly name: string;
  /** the roles whose turns it rewards (every other turn gets null) */
  readonly roles: ReadonlySet<RoleId>;
  /** true when it abstains on tasks without an answer (a rule verifier) */
  readonly needsAnswer?: boolean;
  /** per turn rewards for the batch; a judge that calls out (a reward function's module, a server) may answer later */
  score(batch: readonly Episode[]): BatchRewards | Promise<BatchRewards>;
  /** loads what it needs before any work (a reward function's module), so a missing one stops the run at its checks */
  ready?(): Promise<void>;
  /**
   * the judge's own rollout diagnostics for the batch (TTRL's label accuracy for the majority
   * vote), logged beside the loop's; `trained` holds the comparison groups some judge scored
   */
  metrics?(batch: readonly Episode[], trained: ReadonlySet<string>): Record<string, number>;
}

/**
 * The task family's verifier, supplied by the caller: true when `output` (a turn's decoded
 * text) answers `task` correctly. It must treat `output` as data (parse it, never evaluate it).
 */
export type VerifyFn = (task: Task, output: string) => boolean;

/**
 * Which roles a judge rewards: one role id or a list of them. Judges default to 'solver'.
 * Turns of any other role get `null`.
 */
export type RoleOption = RoleId | readonly RoleId[];

/** The role judges reward when none is configured. */
export const DEFAULT_ROLE: RoleId = 'solver';

/** One completion with its advantage, as the solver's update would see it (plain JSON). */
export interface ProbeItem {
  prompt: number[];
  completion: number[];
  advantage: number;
}

/**
 * The live measure a grounded reward needs, supplied by the loop once the models exist: for
 * each chunk of the solver's completions, how much training on it would improve the solver
 * role `role` on the `probe` tasks (see src/engine/probe.ts). No weight moves.
 */
export interface LiveModels {
  alignment?(role: RoleId, probe: readonly Task[], chunks: readonly ProbeItem[][]): number[];
}

/** What a factory may need besides its options. */
export interface JudgeDeps {
  /** the task family's verifier; required by 'verifier' */
  verify?: VerifyFn;
  /** the task family's difficulty measure; required by 'coverage' */
  measure?: (task: Task) => Record<string, number>;
  /** the task family's name, for reading task files */
  family?: string;
  /** what the loop can measure on its live models; required by 'grounded' */
  live?: LiveModels;
}

/** Builds one kind of judge from config options (parsed by its kind's schema) and dependencies. */
export type JudgeFactory = (options: Record<string, unknown>, deps: JudgeDeps) => Judge;

/** A judge kind: its options' schema and its factory (../config/kind.ts). */
export type JudgeKind = import('../config/kind.js').Kind<JudgeFactory>;
