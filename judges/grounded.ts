import { taskOf } from '../src/core/groups.js';
import type { BatchRewards, Episode, RoleId, Task } from '../src/core/types.js';
import { finiteOption, nullRewards, roleSet } from '../src/core/judge-common.js';
import { proposals } from './proposer-common.js';
import type { Judge, LiveModels, ProbeItem, RoleOption, VerifyFn } from '../src/core/judge.js';

export type { LiveModels, ProbeItem } from '../src/core/judge.js';

export interface GroundedOptions {
  role?: RoleOption;
  solver?: RoleId;
  invalid?: number;
  name?: string;
}

/**
 * SOAR's grounded proposer reward: a proposal is worth what training the solver on it does
 * for the solver on a probe set of the target tasks. Each valid proposal's chunk is its
 * episode's solver attempts with the advantages the solver's update gives them (verifier
 * reward, GRPO-normalised within the episode); the loop's probe returns each chunk's
 * first-order gain on the probe set. Rewards are those gains divided by the largest one in
 * the batch (so in [-1, 1]); a proposal all of whose attempts scored alike moves nothing and
 * earns 0; an invalid proposal gets `invalid`.
 */
export class GroundedJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  readonly needsAnswer = true;
  private readonly solver: RoleId;
  private readonly invalid: number;

  constructor(
    private readonly verify: VerifyFn,
    private readonly probe: readonly Task[],
    private readonly live: LiveModels,
    o: GroundedOptions = {},
  ) {
    this.name = o.name ?? 'grounded';
    this.roles = roleSet(o.role ?? 'proposer', this.name);
    this.solver = o.solver ?? 'solver';
    this.invalid = finiteOption(o.invalid ?? -1, this.name, 'invalid');
    if (probe.length === 0) throw new Error(`judge '${this.name}': the probe set is empty`);
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    const all = proposals(batch, this.roles);
    const chunks = all.map(({ e, turn }) => (turn.action.valid ? this.chunk(batch[e]) : []));
    if (!this.live.alignment) throw new Error(`judge '${this.name}': no live models to probe (the loop supplies them)`);
    const gains = this.live.alignment(this.solver, this.probe, chunks);
    const scale = Math.max(1e-12, ...gains.map(Math.abs));
    all.forEach(({ e, t, turn }, i) => (rewards[e][t] = turn.action.valid ? gains[i] / scale : this.invalid));
    return rewards;
  }

  private chunk(episode: Episode): ProbeItem[] {
    const attempts = episode.turns.filter((t) => t.role === this.solver && t.completion.length > 0);
    const r: number[] = attempts.map((t) => (t.action.valid && this.verify(taskOf(episode, t), t.text) ? 1 : 0));
    const mean = r.reduce((a, b) => a + b, 0) / Math.max(r.length, 1);
    const std = Math.sqrt(r.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(r.length - 1, 1));
    return attempts.map((t, i) => ({
      prompt: t.prompt,
      completion: t.completion,
      advantage: (r[i] - mean) / (std + 1e-6),
    }));
  }
}
