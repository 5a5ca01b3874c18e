import { combineRewards } from '../../judges/combine.js';
import { majorityLabel, voteOf } from '../../judges/majority.js';
import { groupBy } from '../util/group.js';
import type { Episode, Reward } from '../core/types.js';
import type { ExperimentConfig } from '../config/schema.js';
import { grpoOutcomeAdvantage, reinforcePlusPlusAdvantage, reinforcePlusPlusBaselineAdvantage, rlooOutcomeAdvantage } from '../rl/advantages.js';
import { keepGroupsWithVariance } from '../rl/filter.js';
import type { TrainSample } from '../rl/trainer.js';
import type { Plan } from './registry.js';

/** A scored turn: where it is, its combined reward, its group for advantages. */
export interface ScoredTurn { episode: Episode; turn: number; reward: number; group: string }

/**
 * Runs every judge on each group (the G episodes of one task) and combines their rewards
 * by weight, null-aware. Turns on which every judge abstained are dropped.
 *
 * With `trainPerGroup` = k, the judges still see the whole group but only episodes with
 * `member < k` are returned: TTRL's split of n_votes_per_prompt (the label comes from all
 * G answers) and n_samples_per_prompt (the first k are trained on, so their advantages are
 * computed among those k). Selection is by member index, not arrival order, because short
 * answers finish first.
 */
export function scoreEpisodes(plan: Plan, episodes: readonly Episode[], trainPerGroup?: number): ScoredTurn[] {
  const out: ScoredTurn[] = [];
  for (const [group, members] of groupBy(episodes, (e) => e.group)) {
    const combined = combineRewards(plan.judges.map((j) => j.judge.score(members)), plan.judges.map((j) => j.weight));
    members.forEach((episode, e) => {
      if (trainPerGroup !== undefined) {
        if (episode.member === undefined) throw new Error(`trainPerGroup: episode ${episode.id} has no member index (playGroups sets it)`);
        if (episode.member >= trainPerGroup) return;
      }
      combined[e].forEach((r: Reward, t) => {
        if (r !== null) out.push({ episode, turn: t, reward: r, group: `${group}:${episode.turns[t].role}` });
      });
    });
  }
  return out;
}

/**
 * Turns scored turns into trainer samples with the configured advantage estimator, per
 * role and group. Rewards sit on the last completion token, as verl's outcome rewards do.
 */
export function toSamples(scored: readonly ScoredTurn[], t: ExperimentConfig['trainer']): TrainSample[] {
  let kept = [...scored];
  if (t.dropEqualGroups) kept = keepGroupsWithVariance(kept.map((s) => s.group), kept.map((s) => s.reward)).map((i) => kept[i]);
  kept = kept.filter((s) => s.episode.turns[s.turn].completion.length > 0);
  if (kept.length === 0) return [];
  const turns = kept.map((s) => s.episode.turns[s.turn]);
  const width = Math.max(...turns.map((x) => x.completion.length));
  const mask = turns.map((x) => Array.from({ length: width }, (_, i) => (i < x.completion.length ? 1 : 0)));
  const rewards = kept.map((s, i) => mask[i].map((_, j) => (j === turns[i].completion.length - 1 ? s.reward : 0)));
  const ids = kept.map((s) => s.group);
  const adv =
    t.advantage === 'rloo' ? rlooOutcomeAdvantage(rewards, mask, ids)
    : t.advantage === 'reinforce++-baseline' ? reinforcePlusPlusBaselineAdvantage(rewards, mask, ids)
    : t.advantage === 'reinforce++' ? reinforcePlusPlusAdvantage(rewards, mask, 1)
    : grpoOutcomeAdvantage(rewards, mask, ids, { normAdvByStd: t.advantage !== 'drgrpo' });
  return turns.map((x, i) => ({
    model: x.model, role: x.role, prompt: x.prompt, completion: x.completion, oldLogProbs: x.logProbs,
    advantages: adv.advantages[i].slice(0, x.completion.length),
  }));
}

/** Rollout metrics that need no model: rewards per role, hidden-label accuracy, TTRL's label and reward accuracy, diversity. */
export function rolloutMetrics(plan: Plan, episodes: readonly Episode[], scored: readonly ScoredTurn[]): Record<string, number> {
  const m: Record<string, number> = {};
  for (const [role, rs] of groupBy(scored, (s) => s.episode.turns[s.turn].role)) m[`reward/${role}`] = mean(rs.map((s) => s.reward));
  const solver = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'solver').map((t) => ({ e, t })));
  const labeled = solver.filter(({ e }) => e.task.answer !== undefined);
  if (labeled.length) m['accuracy/train'] = mean(labeled.map(({ e, t }) => (t.action.valid && plan.family.verify(e.task, t.text) ? 1 : 0)));
  m['rollout/valid_rate'] = mean(solver.map(({ t }) => (t.action.valid ? 1 : 0)));
  m['rollout/entropy'] = mean(episodes.flatMap((e) => e.turns.flatMap((t) => t.entropy)));
  m['rollout/self_certainty'] = mean(episodes.flatMap((e) => e.turns.flatMap((t) => t.selfCertainty)));
  const groups = groupBy(episodes, (e) => e.group);
  const answers = [...groups.values()].map((g) => g.flatMap((e) => e.turns.filter((t) => t.role === 'solver').map(voteOf)));
  m['rollout/distinct_answers'] = mean(answers.map((a) => new Set(a.filter((x) => x !== null)).size));
  if (plan.judges.some((j) => j.kind === 'majority') && labeled.length) {
    const trained = new Set(scored.map((s) => s.episode.group));
    Object.assign(m, ttrlMetrics(plan, [...groups.values()], trained));
  }
  return m;
}

/**
 * TTRL's diagnostics: how often the majority label is right, and how often its reward
 * matches the true reward. `trained` holds the groups some judge scored; with a vote-share
 * guard (`minShare`) the label accuracy on those is what the update actually learns from.
 */
function ttrlMetrics(plan: Plan, groups: Episode[][], trained: ReadonlySet<string>): Record<string, number> {
  const labelRight: number[] = [];
  const trainedRight: number[] = [];
  const rewardRight: number[] = [];
  for (const g of groups) {
    const turns = g.flatMap((e) => e.turns.filter((t) => t.role === 'solver').map((t) => ({ e, t })));
    const { label } = majorityLabel(turns.map(({ t }) => voteOf(t)));
    if (label === null || g[0].task.answer === undefined) continue;
    const right = plan.family.verify(g[0].task, label) ? 1 : 0;
    labelRight.push(right);
    if (trained.has(g[0].group)) trainedRight.push(right);
    for (const { e, t } of turns) {
      const voted = t.action.valid && t.action.value === label ? 1 : 0;
      const truth = t.action.valid && plan.family.verify(e.task, t.text) ? 1 : 0;
      rewardRight.push(voted === truth ? 1 : 0);
    }
  }
  return {
    'ttrl/label_accuracy': mean(labelRight), 'ttrl/reward_accuracy': mean(rewardRight),
    'ttrl/trained_groups': trainedRight.length / groups.length, 'ttrl/trained_label_accuracy': mean(trainedRight),
  };
}

export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
