import type { BatchRewards, Episode } from '../src/core/types.js';
import { finiteOption, nullRewards } from '../src/core/judge-common.js';
import {
  proposals,
  proposerSettings,
  solverSuccess,
  type ProposerOptions,
  type SuccessSource,
} from './proposer-common.js';
import type { Judge, VerifyFn } from '../src/core/judge.js';

/** Options: role, solver, p ('vote' by default: R-Zero is label-free), invalid (-1), name, and the repetition penalty's. */
export interface UncertaintyOptions extends ProposerOptions {
  /** weight λ of the repetition penalty (default 1; 0 turns it off) */
  repetition?: number;
  /** two proposals closer than this normalised edit distance are near-duplicates (default 0.5) */
  threshold?: number;
}

/**
 * R-Zero's challenger reward: uncertainty `1 - 2|p - 1/2|` (highest when the solver's
 * answers split evenly), minus a repetition penalty `λ · |C| / B`, where B is the number of
 * valid proposals in the batch and C those within `threshold` normalised edit distance of
 * this one (itself included); R-Zero clusters by BLEU distance, edit distance serves the same
 * purpose for short task strings. As in R-Zero the result is floored at 0; an invalid
 * proposal gets `invalid`.
 */
export class UncertaintyJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  readonly needsAnswer: boolean;
  private readonly solvers: ReadonlySet<string>;
  private readonly source: SuccessSource;
  private readonly lambda: number;
  private readonly threshold: number;
  private readonly invalid: number;

  constructor(
    private readonly verify: VerifyFn | undefined,
    o: UncertaintyOptions = {},
  ) {
    ({
      name: this.name,
      roles: this.roles,
      needsAnswer: this.needsAnswer,
      solvers: this.solvers,
      source: this.source,
      invalid: this.invalid,
    } = proposerSettings(o, { name: 'uncertainty', p: 'vote' }, verify));
    this.lambda = finiteOption(o.repetition ?? 1, this.name, 'repetition');
    this.threshold = finiteOption(o.threshold ?? 0.5, this.name, 'threshold');
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    const all = proposals(batch, this.roles);
    const valid = all.filter(({ turn }) => turn.action.valid).map(({ turn }) => turn.action.value ?? '');
    for (const { e, t, turn } of all) {
      if (!turn.action.valid) {
        rewards[e][t] = this.invalid;
        continue;
      }
      const p = solverSuccess(batch[e], this.solvers, this.source, this.verify);
      if (p === null) continue;
      const mine = turn.action.value ?? '';
      const near = valid.filter(
        (other) => editDistance(mine, other) / Math.max(mine.length, other.length, 1) < this.threshold,
      ).length;
      rewards[e][t] = Math.max(0, 1 - 2 * Math.abs(p - 0.5) - (this.lambda * near) / valid.length);
    }
    return rewards;
  }
}

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = keep;
    }
  }
  return row[b.length];
}
