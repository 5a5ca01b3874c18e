/**
 * The judge contract. A judge is a reward source: a pure function from a GROUP of episodes
 * (the G episodes played on the same task) to one reward per turn. Judges read plain JSON
 * only — the model already attached per-token statistics to each turn — and never run,
 * parse as code, or otherwise execute model output.
 */
import type { Episode, GroupRewards, RoleId, Task } from '../src/core/types.js';

/**
 * A reward source.
 *
 * `score(group)` returns `rewards` with `rewards[e][t]` for `group[e].turns[t]` (same shape
 * as the group, so `rewards[e].length === group[e].turns.length`). A `null` reward means
 * the judge abstains on that turn: turns of roles the judge is not configured for are
 * always `null`. `score([])` returns `[]`. Every episode must carry the same `group` id,
 * otherwise `score` throws (group-relative judges such as a majority vote would silently
 * mix tasks). `score` does not mutate its input.
 */
export interface Judge {
  /** for logs, metrics and config; defaults to the judge kind, e.g. 'majority' */
  readonly name: string;
  /** the roles whose turns it rewards (every other turn gets null) */
  readonly roles: ReadonlySet<RoleId>;
  /** true when it abstains on tasks without an answer (a rule verifier) */
  readonly needsAnswer?: boolean;
  score(group: readonly Episode[]): GroupRewards;
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
