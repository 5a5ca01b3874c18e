import { combineRewards, normalizeThenSum } from '../core/combine.js';
import { voteOf } from '../core/vote.js';
import { groupBy } from '../util/group.js';
import type { Episode, Reward, Turn } from '../core/types.js';
import type { ADVANTAGES, ExperimentConfig } from '../config/schema.js';
import { comparisonGroup, taskOf } from '../core/groups.js';
import type { KlKind } from '../rl/kl.js';
import { applyKlPenalty, type KlController } from '../rl/kl-reward.js';
import {
  broadcastOverTokens,
  grpoOutcomeAdvantage,
  reinforcePlusPlusAdvantage,
  reinforcePlusPlusBaselineAdvantage,
  rlooOutcomeAdvantage,
} from '../rl/advantages.js';
import { RoleBaseline } from '../rl/role-baseline.js';
import { keepGroupsWithVariance } from '../rl/filter.js';
import { StateBaseline } from '../rl/state-baseline.js';
import type { TrainSample } from '../rl/trainer.js';
import type { Plan } from './plan.js';

/** A scored turn: where it is, its combined reward, each judge's part (and weight), its comparison group for advantages. */
export interface ScoredTurn {
  episode: Episode;
  turn: number;
  reward: number;
  parts: { rewards: Reward[]; weights: readonly number[] };
  group: string;
  refLogProbs?: number[];
}

/** How one role learns: its advantage estimator, its KL loss weight, and KL as a reward penalty. */
export interface RoleTraining {
  advantage: (typeof ADVANTAGES)[number];
  klCoef?: number;
  klReward?: { ctrl: KlController; kind: KlKind };
  lossWeight?: number;
}

/**
 * Runs every judge on the whole batch (a judge may compare turns across it) and combines
 * their rewards by weight, null-aware. Turns on which every judge abstained are dropped.
 * Each kept turn carries its comparison group (src/core/groups.ts), the arena's choice.
 *
 * With `trainPerGroup` = k, the judges still see every episode but only episodes with
 * `member < k` are returned: TTRL's split of n_votes_per_prompt (the label comes from all
 * G answers) and n_samples_per_prompt (the first k are trained on, so their advantages are
 * computed among those k). Selection is by member index, not arrival order, because short
 * answers finish first.
 */
export async function scoreEpisodes(
  plan: Plan,
  episodes: readonly Episode[],
  trainPerGroup?: number,
): Promise<ScoredTurn[]> {
  const perJudge = await Promise.all(plan.judges.map((j) => j.judge.score(episodes)));
  const weights = plan.judges.map((j) => j.weight);
  const combined = combineRewards(perJudge, weights);
  const out: ScoredTurn[] = [];
  episodes.forEach((episode, e) => {
    if (trainPerGroup !== undefined) {
      if (episode.member === undefined)
        throw new Error(`trainPerGroup: episode ${episode.id} has no member index (playGroups sets it)`);
      if (episode.member >= trainPerGroup) return;
    }
    combined[e].forEach((r: Reward, t) => {
      const at = episode.turns[t].temperature;
      if (r !== null && at !== undefined)
        throw new Error(
          `episode ${episode.id} turn ${t} (${episode.turns[t].role}): sampled at the arena's temperature ${at}, it is data for other turns and cannot be trained, yet a judge paid it ${r}`,
        );
      if (r !== null)
        out.push({
          episode,
          turn: t,
          reward: r,
          parts: { rewards: perJudge.map((j) => j[e][t]), weights },
          group: comparisonGroup(episode, episode.turns[t]),
        });
    });
  });
  return out;
}

/**
 * Turns scored turns into trainer samples, role by role: each role's KL reward penalty
 * (verl's apply_kl_penalty, with its controller) on its token rewards, then its advantage
 * estimator over its comparison groups. Rewards sit on the last completion token, as verl's
 * outcome rewards do. Returns the KL-reward metrics per role beside the samples. `baselines`
 * holds each role's moving baseline for 'rae' (SPIRAL's RoleBaseline, keyed by role: the
 * loop keeps it across iterations and in every checkpoint); this updates it, turn by turn.
 * `states` is the 'infostate' estimator's baseline per decision point, kept the same way.
 */
export function toSamples(
  scored: readonly ScoredTurn[],
  t: ExperimentConfig['trainer'],
  roles: Readonly<Record<string, RoleTraining>> = {},
  baselines = new RoleBaseline(t.raeDecay ?? 0.95),
  states = new StateBaseline(t.critic.decay),
): { samples: TrainSample[]; metrics: Record<string, number>; credited: Array<{ turn: Turn; advantage: number }> } {
  let kept = [...scored];
  if (t.dropEqualGroups)
    kept = keepGroupsWithVariance(
      kept.map((s) => s.group),
      kept.map((s) => s.reward),
    ).map((i) => kept[i]);
  kept = kept.filter((s) => s.episode.turns[s.turn].completion.length > 0);
  const samples: TrainSample[] = [];
  const metrics: Record<string, number> = {};
  const credited: Array<{ turn: Turn; advantage: number }> = [];
  for (const [role, items] of groupBy(kept, (s) => s.episode.turns[s.turn].role)) {
    const r = roles[role] ?? { advantage: t.advantage };
    const turns = items.map((s) => s.episode.turns[s.turn]);
    const width = Math.max(...turns.map((x) => x.completion.length));
    const mask = turns.map((x) => Array.from({ length: width }, (_, i) => (i < x.completion.length ? 1 : 0)));
    let rewards = items.map((s, i) => mask[i].map((_, j) => (j === turns[i].completion.length - 1 ? s.reward : 0)));
    if (r.klReward) {
      const pad = (xs: readonly number[]) => Array.from({ length: width }, (_, j) => xs[j] ?? 0);
      const refs = items.map((s) => {
        if (!s.refLogProbs)
          throw new Error(
            `roles.${role}.klReward: turn ${s.turn} of episode ${s.episode.id} has no reference log-probs`,
          );
        return pad(s.refLogProbs);
      });
      const k = applyKlPenalty(
        rewards,
        turns.map((x) => pad(x.logProbs)),
        refs,
        mask,
        r.klReward.kind,
        r.klReward.ctrl,
      );
      rewards = k.rewards;
      Object.assign(metrics, { [`kl_reward/${role}/kl`]: k.currentKl, [`kl_reward/${role}/coef`]: k.beta });
    }
    const ids = items.map((s) => s.group);
    // a broadcast outcome is one sample of its episode, however many turns it pays
    const units = items.map((s, i) => (turns[i].broadcast ? s.episode.id : `${s.episode.id}#${s.turn}`));
    if (turns.some((x) => x.broadcast) && !['grpo', 'drgrpo'].includes(r.advantage))
      throw new Error(
        `roles.${role}: its turns share one broadcast outcome per episode; advantage '${r.advantage}' would count it once per turn: use grpo or drgrpo`,
      );
    let adv: { advantages: number[][] };
    if (t.rewardAggregation === 'normalize-then-sum') {
      // TRL's normalize_then_sum over this role's turns: the batch it normalises is the role's
      adv = {
        advantages: broadcastOverTokens(
          normalizeThenSum(
            items.map((s) => s.parts.rewards),
            ids,
            items[0].parts.weights,
          ),
          mask,
        ),
      };
    } else if (r.advantage === 'rae') {
      // SPIRAL's order: each turn's score against the baseline before it, then folded in
      metrics[`rae/${role}/baseline`] = baselines.baseline(role);
      adv = {
        advantages: broadcastOverTokens(
          rewards.map((row) =>
            baselines.advantage(
              role,
              row.reduce((a, b) => a + b, 0),
            ),
          ),
          mask,
        ),
      };
    } else if (r.advantage === 'infostate') {
      const keys = turns.map((x) => {
        if (x.state === undefined)
          throw new Error(
            `roles.${role}: advantage 'infostate' needs turns that name their decision point (a game arena's); this one has none`,
          );
        return x.state;
      });
      const sums = rewards.map((row) => row.reduce((a, b) => a + b, 0));
      adv = { advantages: broadcastOverTokens(states.advantages(keys, sums), mask) };
    } else
      adv =
        r.advantage === 'rloo'
          ? rlooOutcomeAdvantage(rewards, mask, ids)
          : r.advantage === 'reinforce++-baseline'
            ? reinforcePlusPlusBaselineAdvantage(rewards, mask, ids)
            : r.advantage === 'reinforce++'
              ? reinforcePlusPlusAdvantage(rewards, mask, 1)
              : grpoOutcomeAdvantage(rewards, mask, ids, { normAdvByStd: r.advantage !== 'drgrpo', units });
    turns.forEach((x, i) => {
      const sample: TrainSample = {
        model: x.model,
        role: x.role,
        prompt: x.prompt,
        completion: x.completion,
        oldLogProbs: x.logProbs,
        advantages: adv.advantages[i].slice(0, x.completion.length),
      };
      if (x.legal) sample.legal = x.legal;
      if (items[i].refLogProbs) sample.refLogProbs = items[i].refLogProbs;
      if (r.klCoef !== undefined) sample.klCoef = r.klCoef;
      if (r.lossWeight !== undefined) sample.lossWeight = r.lossWeight;
      samples.push(sample);
      credited.push({ turn: x, advantage: mean(adv.advantages[i].slice(0, x.completion.length)) });
    });
  }
  return { samples, metrics, credited };
}

/** Rollout metrics that need no model: rewards per role, hidden-label accuracy, TTRL's label and reward accuracy, diversity. */
export function rolloutMetrics(
  plan: Plan,
  episodes: readonly Episode[],
  scored: readonly ScoredTurn[],
): Record<string, number> {
  const m: Record<string, number> = {};
  for (const [role, rs] of groupBy(scored, (s) => s.episode.turns[s.turn].role))
    m[`reward/${role}`] = mean(rs.map((s) => s.reward));
  // turns played per role: the rollout budget, so runs of different arenas compare at equal cost
  for (const [role, ts] of groupBy(
    episodes.flatMap((e) => e.turns),
    (t) => t.role,
  ))
    m[`turns/${role}`] = ts.length;
  // the turns that answer the task (a solver's), whatever the role is called
  const solver = episodes.flatMap((e) =>
    e.turns.filter((t) => plan.roles[t.role]?.answersTasks).map((t) => ({ e, t })),
  );
  const labeled = solver.filter(({ e, t }) => taskOf(e, t).answer !== undefined);
  if (labeled.length)
    m['accuracy/train'] = mean(
      labeled.map(({ e, t }) => (t.action.valid && plan.family.verify(taskOf(e, t), t.text) ? 1 : 0)),
    );
  m['rollout/valid_rate'] = mean(solver.map(({ t }) => (t.action.valid ? 1 : 0)));
  // a given turn's were not sampled (zeros); one sampled at the arena's temperature is not the policy's sampling
  const sampled = episodes.flatMap((e) => e.turns.filter((t) => !t.given && t.temperature === undefined));
  m['rollout/entropy'] = mean(sampled.flatMap((t) => t.entropy));
  m['rollout/self_certainty'] = mean(sampled.flatMap((t) => t.selfCertainty));
  // the solver's comparison groups: the answers to one task
  const groups = [...groupBy(solver, ({ e, t }) => comparisonGroup(e, t)).entries()];
  m['rollout/distinct_answers'] = mean(
    groups.map(([, g]) => new Set(g.map(({ t }) => voteOf(t)).filter((x) => x !== null)).size),
  );
  const trained = new Set(scored.map((s) => s.group));
  for (const { judge } of plan.judges) Object.assign(m, judge.metrics?.(episodes, trained));
  return m;
}

export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
