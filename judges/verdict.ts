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
  /**
   * what it scores: 'verdict' (default), or 'working', the judge's output before its verdict
   * against the working of the turn's task `target` (the arena files the ideal completion,
   * the reference answer then the verdict, there). Why: a judge that writes its own answer
   * before judging and is paid only for the verdict lets that working drift (measured: it
   * degenerated to one digit, and the verdict fell to 'always y'); JudgeLRM's reward likewise
   * pays the form of the reasoning besides the verdict.
   */
  score?: 'verdict' | 'working';
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
  private readonly working: boolean;

  constructor(options: VerdictOptions = {}) {
    this.name = options.name ?? 'verdict';
    this.roles = roleSet(options.role ?? 'judge', this.name);
    this.r = { correct: options.correct ?? 1, wrong: options.wrong ?? 0, invalid: options.invalid ?? 0 };
    this.working = options.score === 'working';
  }

  score(batch: readonly Episode[]): BatchRewards {
    return batch.map((e) =>
      e.turns.map((t) => {
        const truth = this.working ? t.task?.target?.slice(0, -1) : t.task?.answer;
        if (!this.roles.has(t.role) || truth === undefined) return null;
        if (!t.action.valid) return this.r.invalid;
        // the working is everything before the verdict, the output's last character
        const said = this.working ? t.text.trim().slice(0, -1) : t.action.value;
        return said === truth ? this.r.correct : this.r.wrong;
      }),
    );
  }
}
