/**
 * TTRL's majority vote (Zuo et al., "TTRL: Test-Time Reinforcement Learning"): with no
 * reference answer, the group's most common answer is taken as the pseudo-label and each
 * answer is rewarded by agreement with it.
 */
import type { Episode, BatchRewards } from '../src/core/types.js';
import { majorityLabel, voteOf } from '../src/core/vote.js';
import { finiteOption, nullRewards, roleSet, turnsByGroup } from '../src/core/judge-common.js';
import { taskOf } from '../src/core/groups.js';
import type { Judge, RoleOption, VerifyFn } from '../src/core/judge.js';

export { majorityLabel, voteOf, type MajorityResult } from '../src/core/vote.js';

/** Options for {@link MajorityJudge}. */
export interface MajorityOptions {
  /** roles whose turns vote and are rewarded (default 'solver'); other roles' turns get null */
  role?: RoleOption;
  /** judge name (default 'majority') */
  name?: string;
  /**
   * Abstain on a group whose label won less than this share of the group's voters (default 0,
   * TTRL as published). Invalid answers count as voters, so they lower the share. A weak
   * plurality is a poor label: on the shipped working base the label is right 37% of the time
   * below a share of 0.2 and 78% at 0.4 or more, so a guard trains only on the confident groups.
   */
  minShare?: number;
  /**
   * Abstain on a group whose label won more than this share (default 1). R-Zero trains the
   * solver only where 0.3 <= share <= 0.8: a near-unanimous vote teaches nothing new.
   */
  maxShare?: number;
}

/**
 * Rewards each turn of the configured roles by agreement with its comparison group's majority
 * answer (the G answers to one task: one group of episodes, or one episode's attempts).
 *
 * All such turns of the comparison group vote, in batch order (episode by episode, turn by turn);
 * a turn's vote is `action.value` when `action.valid` is true (a valid action whose value is
 * null is treated as invalid). The label is {@link majorityLabel} of those votes, so ties go
 * to the value that appears first in the group. Reward: 1 for a valid answer equal to the
 * label, 0 otherwise (a different answer or an invalid one). If no turn in the group is
 * valid there is no label, and every turn of the configured roles gets `null` (abstain)
 * rather than a uniform 0 that would only look like a signal. With `minShare` the judge
 * also abstains when the label's votes are fewer than `minShare` × the number of voting
 * turns (valid or not). `task.answer` is never read.
 */
export class MajorityJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  private readonly minShare: number;
  private readonly maxShare: number;

  constructor(
    options: MajorityOptions = {},
    private readonly verify?: VerifyFn,
  ) {
    this.name = options.name ?? 'majority';
    this.roles = roleSet(options.role, this.name);
    this.minShare = finiteOption(options.minShare ?? 0, this.name, 'minShare');
    if (this.minShare < 0 || this.minShare > 1)
      throw new Error(`judge '${this.name}': option 'minShare' must be in [0, 1], got ${this.minShare}`);
    this.maxShare = finiteOption(options.maxShare ?? 1, this.name, 'maxShare');
    if (this.maxShare < this.minShare || this.maxShare > 1)
      throw new Error(`judge '${this.name}': option 'maxShare' must be in [minShare, 1], got ${this.maxShare}`);
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    for (const turns of turnsByGroup(batch, this.roles).values()) {
      const { label, votes: won } = majorityLabel(turns.map(({ turn }) => voteOf(turn)));
      if (label === null || won < this.minShare * turns.length || won > this.maxShare * turns.length) continue;
      for (const { e, t, turn } of turns) rewards[e][t] = voteOf(turn) === label ? 1 : 0;
    }
    return rewards;
  }

  /**
   * TTRL's diagnostics, where tasks carry answers the reward never reads: how often the
   * majority label is right (`ttrl/label_accuracy`), how often its reward matches the true
   * reward (`ttrl/reward_accuracy`), and on the groups some judge scored (with a vote-share
   * guard, what the update actually learns from) the share trained and their label accuracy.
   */
  metrics(batch: readonly Episode[], trained: ReadonlySet<string>): Record<string, number> {
    if (!this.verify) return {};
    const labelRight: number[] = [];
    const trainedRight: number[] = [];
    const rewardRight: number[] = [];
    const groups = [...turnsByGroup(batch, this.roles)];
    for (const [id, turns] of groups) {
      const { label } = majorityLabel(turns.map(({ turn }) => voteOf(turn)));
      const task = taskOf(batch[turns[0].e], turns[0].turn);
      if (label === null || task.answer === undefined) continue;
      const right = this.verify(task, label) ? 1 : 0;
      labelRight.push(right);
      if (trained.has(id)) trainedRight.push(right);
      for (const { e, turn } of turns) {
        const voted = voteOf(turn) === label ? 1 : 0;
        const truth = turn.action.valid && this.verify(taskOf(batch[e], turn), turn.text) ? 1 : 0;
        rewardRight.push(voted === truth ? 1 : 0);
      }
    }
    if (!labelRight.length) return {};
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
    return {
      'ttrl/label_accuracy': mean(labelRight),
      'ttrl/reward_accuracy': mean(rewardRight),
      'ttrl/trained_groups': trainedRight.length / groups.length,
      'ttrl/trained_label_accuracy': mean(trainedRight),
    };
  }
}
