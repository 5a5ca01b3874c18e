import type { BatchRewards, Episode, RoleId } from '../src/core/types.js';
import { roleSet } from '../src/core/judge-common.js';
import type { Judge } from '../src/core/judge.js';

export interface OutcomeOptions {
  /** the roles whose turns it rewards, e.g. [seat0, seat1] */
  role?: RoleId | RoleId[];
  name?: string;
  /**
   * Weigh each scored turn's reward by the inverse frequency of its truth's class in the batch
   * (the class is the turn's `task.answer`, which the arena files: for the five-roles manager,
   * the kind of the operation that was right), normalised so the weights average 1:
   * w_c = N / (K n_c) over the N scored turns with a class, K classes present, n_c of class c;
   * turns without one weigh 1. Why: a 0/1 outcome's expected reward is then the mean of the
   * per-class rates (balanced accuracy), not the overall rate. Measured: a manager paid the plain
   * outcome, with NOOP right 0.6 of the time, wrote NOOP on 0.96 of its turns within 10 iterations
   * and its held-out right operations fell 0.668 -> 0.527. The weights move the rewards, not the
   * baseline: compared across the batch, a right turn of a common class is paid below the
   * batch's mean. Measured (five-roles, a manager right 0.97 of the time, iterations 60 to 80):
   * 291 of 297 right NOOPs got a negative advantage, and its held-out right operations fell
   * 0.973 -> 0.898 by iteration 75.
   */
  balance?: boolean;
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
  private readonly balance: boolean;

  constructor(options: OutcomeOptions) {
    this.name = options.name ?? 'outcome';
    if (options.role === undefined)
      throw new Error("judge 'outcome': option 'role' (the roles it rewards, e.g. [seat0, seat1]) is required");
    this.roles = roleSet(options.role, this.name);
    this.balance = options.balance ?? false;
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = batch.map((e) =>
      e.turns.map((t) =>
        this.roles.has(t.role) && t.outcome !== null ? (t.outcome ?? e.outcome?.[t.role] ?? null) : null,
      ),
    );
    return this.balance ? balanceByClass(batch, rewards) : rewards;
  }
}

/** `rewards` with each non-null one weighted by its turn's class (`task.answer`) as `balance` says. */
function balanceByClass(batch: readonly Episode[], rewards: BatchRewards): BatchRewards {
  const classOf = (e: number, t: number) => (rewards[e][t] === null ? undefined : batch[e].turns[t].task?.answer);
  const counts = new Map<string, number>();
  batch.forEach((ep, e) =>
    ep.turns.forEach((_, t) => {
      const c = classOf(e, t);
      if (c !== undefined) counts.set(c, (counts.get(c) ?? 0) + 1);
    }),
  );
  const n = [...counts.values()].reduce((a, b) => a + b, 0);
  return rewards.map((row, e) =>
    row.map((r, t) => {
      const c = classOf(e, t);
      return r === null || c === undefined ? r : (r * n) / (counts.size * counts.get(c)!);
    }),
  );
}
