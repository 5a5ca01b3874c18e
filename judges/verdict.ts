import type { BatchRewards, Episode, RoleId } from '../src/core/types.js';
import { roleSet } from './common.js';
import type { Judge } from './types.js';

export interface VerdictOptions {
  /** the roles whose verdicts it scores (default 'judge') */
  role?: RoleId | RoleId[];
  name?: string;
  /** rewards of a right verdict, a wrong one and an output that is no verdict (default 1, 0, 0) */
  correct?: number;
  wrong?: number;
  invalid?: number;
}

/**
 * JudgeLRM's reward: whether a judge's verdict is right. The arena that asked for the
 * verdict filed the truth as the answer of the turn's own task (`turn.task.answer`: the
 * better answer's letter, or 'y' / 'n' for one answer), so this reads plain data. Abstains
 * on turns of other roles and on turns without a known truth.
 */
export class VerdictJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<RoleId>;
  private readonly r: { correct: number; wrong: number; invalid: number };

  constructor(options: VerdictOptions = {}) {
    this.name = options.name ?? 'verdict';
    this.roles = roleSet(options.role ?? 'judge', this.name);
    this.r = { correct: options.correct ?? 1, wrong: options.wrong ?? 0, invalid: options.invalid ?? 0 };
  }

  score(batch: readonly Episode[]): BatchRewards {
    return batch.map((e) =>
      e.turns.map((t) => {
        const truth = t.task?.answer;
        if (!this.roles.has(t.role) || truth === undefined) return null;
        if (!t.action.valid) return this.r.invalid;
        return t.action.value === truth ? this.r.correct : this.r.wrong;
      }),
    );
  }
}
