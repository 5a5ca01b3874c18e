import type { Observable } from 'rxjs';
import type { CompareScope, Episode, RoleId, Task, Turn } from '../src/core/types.js';
import type { Observation } from '../roles/types.js';

/** How an arena files a turn: its comparison group, and the task it acted on when not the episode's. */
export interface ActOptions {
  compare?: CompareScope;
  task?: Task;
}

/** What an arena may do: ask a role to act on an observation, and look at what the loop remembers. */
export interface ArenaContext {
  act(role: RoleId, observation: Observation, options?: ActOptions): Promise<Turn>;
  /** true when `prompt` is a recent task of the task buffer (a proposer's duplicate) */
  isRecent?(prompt: string): boolean;
}

/**
 * The protocol of one episode: who acts when, what each sees, when it ends. Written for
 * one episode; it emits its turns as they happen and completes when the episode ends.
 * Arenas know nothing of learning (OpenSpiel's habit).
 */
export interface Arena {
  readonly kind: string;
  /** the role ids this arena asks to act, each with the role kind it needs; the config must bind each */
  readonly roles: Readonly<Record<RoleId, string>>;
  play(task: Task, ctx: ArenaContext): Observable<Turn>;
  /** true when a role writes the tasks (self-play): the loop then feeds blank seed tasks */
  readonly writesTasks?: boolean;
  /** the arena's own rollout metrics (what its roles did), e.g. proposals/valid_rate */
  metrics?(episodes: readonly Episode[]): Record<string, number>;
}

/** Builds an arena from its config options (checked; an unknown key is an error) and the task family. */
export type ArenaFactory = (options: Record<string, unknown>, family: import('../src/tasks/types.js').TaskFamily<unknown>) => Arena;
