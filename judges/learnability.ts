import type { BatchRewards, Episode } from '../src/core/types.js';
import { nullRewards } from '../src/core/judge-common.js';
import {
  proposals,
  proposerSettings,
  solverSuccess,
  type ProposerOptions,
  type SuccessSource,
} from './proposer-common.js';
import type { Judge, VerifyFn } from '../src/core/judge.js';

/** Options: role, solver, p ('verifier' by default), invalid (-1), name. */
export type LearnabilityOptions = ProposerOptions;

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

  constructor(
    private readonly verify: VerifyFn | undefined,
    o: LearnabilityOptions = {},
  ) {
    ({
      name: this.name,
      roles: this.roles,
      needsAnswer: this.needsAnswer,
      solvers: this.solvers,
      source: this.source,
      invalid: this.invalid,
    } = proposerSettings(o, { name: 'learnability', p: 'verifier' }, verify));
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
