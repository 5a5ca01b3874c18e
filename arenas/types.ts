import type { Observable } from 'rxjs';
import type { RoleId, Task, Turn } from '../src/core/types.js';
import type { Observation } from '../roles/types.js';

/** What an arena may do: ask a role to act on an observation. */
export interface ArenaContext {
  act(role: RoleId, observation: Observation): Promise<Turn>;
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
}
