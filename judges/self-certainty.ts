/**
 * Intuitor's reward (Zhao et al., "Learning to Reason without External Rewards"): the
 * model's own confidence, measured as self-certainty — per token KL(U || p), the divergence
 * of the next-token distribution from uniform — averaged over the completion.
 */
import type { Episode, BatchRewards, Reward, Turn } from '../src/core/types.js';
import { finiteOption, nullRewards, roleSet, show, turnsByGroup } from '../src/core/judge-common.js';
import type { Judge, RoleOption } from '../src/core/judge.js';

/** Options for {@link SelfCertaintyJudge}. */
export interface SelfCertaintyOptions {
  /** roles to reward (default 'solver'); other roles' turns get null */
  role?: RoleOption;
  /** judge name (default 'self-certainty') */
  name?: string;
  /**
   * 'none' (default): the raw mean self-certainty (nats, ≥ 0).
   * 'group': (x − mean) / (std + 1e-6) over the group's scored turns, std the population
   * std. The trainer's GRPO advantage does this anyway, so 'group' changes nothing for a
   * lone judge; it matters when combining judges, putting self-certainty on a unit scale
   * next to 0/1 rewards instead of letting its raw magnitude dominate the weighted sum.
   */
  normalize?: 'none' | 'group';
  /**
   * When set, a turn whose action is invalid gets exactly this reward instead of its
   * self-certainty, so confidently produced garbage is not reinforced. It is not normalised
   * and such turns are left out of the group statistics. Default: no special case.
   */
  invalidReward?: number;
}

/** Guards the division by the std so a group of identical scores normalises to 0, not NaN. */
const EPS = 1e-6;

/** Mean of a turn's per-token self-certainty; null for an empty completion. */
function meanSelfCertainty(turn: Turn, judge: string, where: string): Reward {
  const sc = turn.selfCertainty;
  if (sc.length !== turn.completion.length) {
    // Misaligned statistics mean a bug upstream; scoring them would reward the wrong tokens.
    throw new Error(
      `judge '${judge}': ${where} has ${sc.length} self-certainty values for ${turn.completion.length} completion tokens`,
    );
  }
  if (sc.length === 0) return null;
  let sum = 0;
  for (const v of sc) {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new Error(`judge '${judge}': ${where} has self-certainty ${show(v)}`);
    }
    sum += v;
  }
  return sum / sc.length;
}

/**
 * Rewards each turn of the configured roles by the mean of `turn.selfCertainty` over its
 * completion tokens (values already computed by the model as KL(U || p) ≥ 0).
 *
 * Per turn, in order of precedence:
 * - empty completion → `null` (no tokens: nothing to score and nothing to reinforce);
 * - `invalidReward` set and `action.valid` false → `invalidReward`;
 * - else the mean self-certainty, then group-normalised if `normalize: 'group'` (statistics
 *   over exactly these turns across the whole group; a single such turn normalises to 0).
 *
 * Throws, naming episode and turn, when a scored turn's `selfCertainty` length differs from
 * its completion length or holds a non-finite value (NaN, or ∞ from a probability that
 * underflowed): one such value would poison the sum, the group statistics and the advantage.
 */
export class SelfCertaintyJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<string>;
  private readonly normalize: 'none' | 'group';
  private readonly invalidReward: number | undefined;

  constructor(options: SelfCertaintyOptions = {}) {
    this.name = options.name ?? 'self-certainty';
    this.roles = roleSet(options.role, this.name);
    const normalize = options.normalize ?? 'none';
    if (normalize !== 'none' && normalize !== 'group') {
      throw new Error(`judge '${this.name}': option 'normalize' must be 'none' or 'group', got ${show(normalize)}`);
    }
    this.normalize = normalize;
    this.invalidReward =
      options.invalidReward === undefined ? undefined : finiteOption(options.invalidReward, this.name, 'invalidReward');
  }

  score(batch: readonly Episode[]): BatchRewards {
    const rewards = nullRewards(batch);
    for (const turns of turnsByGroup(batch, this.roles).values()) {
      // positions of the turns that carry a raw self-certainty score (the ones to normalise)
      const scored: [number, number][] = [];
      for (const { e, t, episode, turn } of turns) {
        const mean = meanSelfCertainty(turn, this.name, `episode '${episode.id}' turn ${t}`);
        if (mean === null) continue;
        if (this.invalidReward !== undefined && !turn.action.valid) {
          rewards[e][t] = this.invalidReward;
          continue;
        }
        rewards[e][t] = mean;
        scored.push([e, t]);
      }
      if (this.normalize === 'group' && scored.length > 0) {
        const xs = scored.map(([e, t]) => rewards[e][t] as number);
        const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
        const std = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
        scored.forEach(([e, t], i) => (rewards[e][t] = (xs[i] - mean) / (std + EPS)));
      }
    }
    return rewards;
  }
}
