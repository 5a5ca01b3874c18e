import type { BatchRewards, Episode } from '../src/core/types.js';
import { finiteOption, nullRewards, roleSet } from './common.js';
import { checkSource, proposals, solverSuccess, type SuccessSource } from './proposer-common.js';
import type { Judge, RoleOption, VerifyFn } from './types.js';

export interface LearnabilityOptions {
  /** the proposer roles rewarded (default 'proposer') */
  role?: RoleOption;
  /** the roles whose attempts measure p (default 'solver') */
  solver?: RoleOption;
  /** p from the environment's answer ('verifier', default) or the solver's own vote ('vote') */
  p?: SuccessSource;
  /** reward of an invalid proposal (default -1) */
  invalid?: number;
  name?: string;
}

/**
 * Absolute Zero's proposer reward, learnability: with p the solver's success rate on the
 * proposed task, `1 - p` when `0 < p < 1`, else 0 (a task always or never solved teaches
 * nothing). An invalid proposal (it did not parse, broke the limits, repeated a recent task)
 * gets `invalid`. Reads the solver turns of the proposal's own episode.
 */
export class LearnabilityJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  readonly needsAnswer: boolean;
  private readonly solvers: ReadonlySet<string>;
  private readonly source: SuccessSource;
  private readonly invalid: number;

  constructor(private readonly verify: VerifyFn | undefined, o: LearnabilityOptions = {}) {
    this.name = o.name ?? 'learnability';
    this.roles = roleSet(o.role ?? 'proposer', this.name);
    this.solvers = roleSet(o.solver ?? 'solver', this.name);
    this.source = checkSource(this.name, o.p ?? 'verifier');
    this.needsAnswer = this.source === 'verifier';
    if (this.needsAnswer && typeof verify !== 'function') throw new Error(`judge '${this.name}': p 'verifier' needs the task family's verifier`);
    this.invalid = finiteOption(o.invalid ?? -1, this.name, 'invalid');
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    for (const { e, t, turn } of proposals(batch, this.roles)) {
      if (!turn.action.valid) {
        rewards[e][t] = this.invalid;
        continue;
      }
      const p = solverSuccess(batch[e], this.solvers, this.source, this.verify);
      if (p !== null) rewards[e][t] = p > 0 && p < 1 ? 1 - p : 0;
    }
    return rewards;
  }
}
