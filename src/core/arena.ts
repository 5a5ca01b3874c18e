import type { Observable } from 'rxjs';
import type { CompareScope, Episode, RoleId, Task, Turn } from './types.js';
import type { Observation } from './role.js';

/** What an arena may emit after an episode's last turn: its own outcome per role and any plain-JSON info. */
export interface EpisodeEnd {
  end: true;
  outcome?: Record<RoleId, number>;
  info?: Record<string, unknown>;
}

/** How an arena files a turn: its comparison group, and the task it acted on when not the episode's. */
export interface ActOptions {
  compare?: CompareScope;
  task?: Task;
  /** the decision point the turn acts at (default: the observation's `state`, as a game's names it): the 'infostate' advantage's baseline keys on it */
  state?: string;
  /**
   * The completion is this text (and the end of sequence), not sampled: a demonstration of
   * the right answer where the role missed it. Its log-probs are scored under the acting
   * model, so the update treats it as a sample drawn at that probability (LUFFY's off-policy
   * guidance with the behaviour policy taken as the current one, without its shaping).
   * The turn is marked `given`.
   */
  given?: string;
  /**
   * Sample this turn at this temperature (0: greedy) instead of the role's: a turn that is data
   * for others, as a greedy verdict that pays a solver. It is never trained: its log-probs are
   * not the ones the update scores at, so a reward on it is refused (file it without a truth).
   */
  temperature?: number;
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
  /** the episode's turns as they happen, and last, optionally, its end (the game's outcome) */
  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd>;
  /**
   * true when the arena makes its own tasks from blank seeds the loop feeds it instead of a
   * dataset's: a proposer writes on them (self-play), a game deals from them
   */
  readonly seedsTasks?: boolean;
  /**
   * what its roles will be shown for a task, at their longest, when that is not the task
   * itself (`{ task }` for each role): the preflight checks these fit the tokenizer and context
   */
  observations?(task: Task): Array<{ role: RoleId; observation: Observation }>;
  /** the arena's own rollout metrics (what its roles did), e.g. proposals/valid_rate */
  metrics?(episodes: readonly Episode[]): Record<string, number>;
  /** which of its metrics the progress line shows beside rewards and accuracies (a proposer's difficulty) */
  readonly progress?: readonly string[];
  /**
   * when its observations also carry numbers for a policy that reads them (kind mlp): the
   * feature vector's length and the number of actions (a game's observation vector and moves);
   * such an observation has `features`, `mask` (the legal actions) and `state` (the decision point's key)
   */
  readonly features?: { inputSize: number; numActions: number };
  /**
   * the game of src/games it plays, when it plays one by its text (src/games/text.ts): what the
   * game evaluators (exploitability, elo, minimax) and export-policy measure
   */
  readonly game?: import('../games/types.js').Game;
  /** what it keeps from one iteration to the next (a bank of tasks a memory manager curates), in the loop's checkpoint */
  readonly carry?: ArenaCarry;
}

/**
 * What an arena keeps across iterations, as plain JSON the loop holds and checkpoints (a
 * resumed run goes on with it). Episodes run in parallel, so they all see the state as the
 * iteration began (the loop hands it to them on their tasks) and it changes between iterations.
 */
export interface ArenaCarry {
  /** the iteration's tasks given the kept state (`undefined` on a fresh run): tasks shown it, kept tasks replayed */
  tasks(kept: unknown, tasks: readonly Task[], it: number): Task[];
  /** the state after the iteration's episodes */
  next(kept: unknown, episodes: readonly Episode[], it: number): unknown;
  /** what the state holds, for the iteration's metrics */
  metrics?(kept: unknown): Record<string, number>;
}

/** Builds an arena from its config options (parsed by its kind's schema) and the task family. */
export type ArenaFactory = (
  options: Record<string, unknown>,
  family: import('./task-family.js').TaskFamily<unknown>,
) => Arena;

/** An arena kind: its options' schema and its factory (src/config/kind.ts). */
export type ArenaKind = import('../config/kind.js').Kind<ArenaFactory>;
