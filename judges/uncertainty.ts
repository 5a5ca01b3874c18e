import type { BatchRewards, Episode } from '../src/core/types.js';
import { finiteOption, nullRewards, roleSet } from './common.js';
import { checkSource, proposals, solverSuccess, type SuccessSource } from './proposer-common.js';
import type { Judge, RoleOption, VerifyFn } from './types.js';

export interface UncertaintyOptions {
  role?: RoleOption;
  solver?: RoleOption;
  /** p from the solver's vote ('vote', default: R-Zero is label-free) or the environment's answer */
  p?: SuccessSource;
  /** weight λ of the repetition penalty (default 1; 0 turns it off) */
  repetition?: number;
  /** two proposals closer than this normalised edit distance are near-duplicates (default 0.5) */
  threshold?: number;
  /** reward of an invalid proposal (default -1) */
  invalid?: number;
  name?: string;
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

  constructor(private readonly verify: VerifyFn | undefined, o: UncertaintyOptions = {}) {
    this.name = o.name ?? 'uncertainty';
    this.roles = roleSet(o.role ?? 'proposer', this.name);
    this.solvers = roleSet(o.solver ?? 'solver', this.name);
    this.source = checkSource(this.name, o.p ?? 'vote');
    this.needsAnswer = this.source === 'verifier';
    if (this.needsAnswer && typeof verify !== 'function') throw new Error(`judge '${this.name}': p 'verifier' needs the task family's verifier`);
    this.lambda = finiteOption(o.repetition ?? 1, this.name, 'repetition');
    this.threshold = finiteOption(o.threshold ?? 0.5, this.name, 'threshold');
    this.invalid = finiteOption(o.invalid ?? -1, this.name, 'invalid');
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
      const near = valid.filter((other) => editDistance(mine, other) / Math.max(mine.length, other.length, 1) < this.threshold).length;
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
