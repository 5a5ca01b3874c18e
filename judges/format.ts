/**
 * Format reward: whether a completion has the shape a reasoning run asks for, as the format
 * rewards of TRL's GRPO examples score it. 'think-answer' (TRL's documented example, the
 * R1/TinyZero format): the whole completion is one `<think>...</think>` then one
 * `<answer>...</answer>` (whitespace between and around allowed). 'think' (TRL's
 * think_format_reward): it opens with `<think>`, has no second `<think>`, and closes it.
 * Nothing is parsed beyond the tags; correctness is another judge's business.
 */
import type { Episode, BatchRewards } from '../src/core/types.js';
import { finiteOption, nullRewards, roleSet } from '../src/core/judge-common.js';
import type { Judge, RoleOption } from '../src/core/judge.js';

/** The shapes it checks. */
export const FORMATS = {
  'think-answer': /^\s*<think>(?![\s\S]*<think>)[\s\S]*?<\/think>\s*<answer>(?![\s\S]*<answer>)[\s\S]*?<\/answer>\s*$/,
  think: /^<think>(?![\s\S]*<think>)[\s\S]*?<\/think>[\s\S]*$/,
} as const;

/** Options for {@link FormatJudge}. */
export interface FormatOptions {
  role?: RoleOption;
  /** judge name (default 'format') */
  name?: string;
  /** which shape (default 'think-answer') */
  format?: keyof typeof FORMATS;
  /** reward of a completion in that shape (default 1) and of one not (default 0) */
  correct?: number;
  wrong?: number;
}

/** Rewards each turn of its roles `correct` when its text has the shape, else `wrong`. */
export class FormatJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  private readonly pattern: RegExp;
  private readonly correct: number;
  private readonly wrong: number;

  constructor(o: FormatOptions = {}) {
    this.name = o.name ?? 'format';
    this.roles = roleSet(o.role, this.name);
    this.pattern = FORMATS[o.format ?? 'think-answer'];
    this.correct = finiteOption(o.correct ?? 1, this.name, 'correct');
    this.wrong = finiteOption(o.wrong ?? 0, this.name, 'wrong');
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    batch.forEach((ep, e) =>
      ep.turns.forEach((turn, t) => {
        if (this.roles.has(turn.role)) rewards[e][t] = this.pattern.test(turn.text) ? this.correct : this.wrong;
      }),
    );
    return rewards;
  }
}
