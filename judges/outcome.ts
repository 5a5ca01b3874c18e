import type { BatchRewards, Episode, RoleId } from '../src/core/types.js';
import { roleSet } from '../src/core/judge-common.js';
import type { Judge } from '../src/core/judge.js';

export interface OutcomeOptions {
  /** the roles whose turns it rewards, e.g. [seat0, seat1] */
  role?: RoleId | RoleId[];
  name?: string;
}

/**
 * The arena's own outcome as each turn's reward: every turn of a role gets that role's
 * outcome in its episode (a game's return for the seat), so a role's moves share the game's
 * result; a turn with an outcome of its own (a re-rollout's result) gets that instead.
 * Abstains on turns with neither, on turns whose own outcome is null (not credited: a flow's
 * earlier planner turns when only its final turn is paid) and on roles it does not name.
 */
export class OutcomeJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<RoleId>;

  constructor(options: OutcomeOptions) {
    this.name = options.name ?? 'outcome';
    if (options.role === undefined)
      throw new Error("judge 'outcome': option 'role' (the roles it rewards, e.g. [seat0, seat1]) is required");
    this.roles = roleSet(options.role, this.name);
  }

  score(batch: readonly Episode[]): BatchRewards {
    return batch.map((e) =>
      e.turns.map((t) =>
        this.roles.has(t.role) && t.outcome !== null ? (t.outcome ?? e.outcome?.[t.role] ?? null) : null,
      ),
    );
  }
}
