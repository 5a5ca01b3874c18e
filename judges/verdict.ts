import type { BatchRewards, Episode, RoleId } from '../src/core/types.js';
import { roleSet } from '../src/core/judge-common.js';
import type { Judge } from '../src/core/judge.js';

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
  /**
   * class weights: a turn whose truth is a key earns its reward (right, wrong or invalid) times
   * that weight; other truths weigh 1. Why: a step critic sees many more right steps than
   * wrong ones, and an error kind it cannot yet tell from right working is 'y' most of the
   * time, so 'n' is rarely sampled there and the policy gradient that would teach the
   * difference vanishes; weighting the rarer class (SPC balances its critic's positive and
   * negative examples) keeps 'n' tried. Within a comparison group of one truth the weight
   * cancels under GRPO's division by the standard deviation, so it acts where truths are pooled
   */
  weights?: Record<string, number>;
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
  private readonly weights: Readonly<Record<string, number>>;

  constructor(options: VerdictOptions = {}) {
    this.name = options.name ?? 'verdict';
    this.roles = roleSet(options.role ?? 'judge', this.name);
    this.r = { correct: options.correct ?? 1, wrong: options.wrong ?? 0, invalid: options.invalid ?? 0 };
    this.working = options.score === 'working';
    this.weights = options.weights ?? {};
  }

  score(batch: readonly Episode[]): BatchRewards {
    return batch.map((e) =>
      e.turns.map((t) => {
        const truth = this.working ? t.task?.target?.slice(0, -1) : t.task?.answer;
        if (!this.roles.has(t.role) || truth === undefined) return null;
        const weight = Object.hasOwn(this.weights, truth) ? this.weights[truth] : 1;
        if (!t.action.valid) return weight * this.r.invalid;
        // the working is everything before the verdict, the output's last character
        const said = this.working ? t.text.trim().slice(0, -1) : t.action.value;
        return weight * (said === truth ? this.r.correct : this.r.wrong);
      }),
    );
  }
}
