import type { BatchRewards, Episode, RoleId, Turn } from '../src/core/types.js';
import { roleSet } from '../src/core/judge-common.js';
import type { Judge } from '../src/core/judge.js';

export interface PeerOptions {
  /** the roles whose answers it rewards (default 'solver') */
  role?: RoleId | RoleId[];
  name?: string;
  /** the reward of an answer that does not parse (default 0) */
  invalid?: number;
  /**
   * how an answer's verdicts become its reward: 'mean', the share of 'y' (default), or
   * 'majority', 1 when more say 'y' than 'n', 0 when fewer, 1/2 on a tie (a generative reward
   * model's majority vote over sampled verdicts, GenRM's maj@K). Why: measured on a judge in
   * the loop whose verdicts on right answers were 'y' 0.97 of the time, one stray 'n' among 4
   * gave 25% of the groups whose answers were all right a reward spread (advantages with no
   * truth behind them); by majority, 2%. 'probability': the mean of each verdict's probability
   * of 'y' (GenRM's and RLAIF's p(Yes) as the reward), which ranks a right answer above a
   * fooling wrong one that both drew 'y'; see `yesProbability`.
   */
  aggregate?: 'mean' | 'majority' | 'probability';
}

/** The verdicts ('y' or 'n', valid) other turns of the episode gave on each task id. */
export function verdictsByTask(e: Episode, answering: ReadonlySet<RoleId>): Map<string, Turn[]> {
  const out = new Map<string, Turn[]>();
  for (const t of e.turns) {
    if (answering.has(t.role) || !t.task || !t.action.valid || (t.action.value !== 'y' && t.action.value !== 'n'))
      continue;
    out.set(t.task.id, [...(out.get(t.task.id) ?? []), t]);
  }
  return out;
}

/** The peer reward of an answer: the share of 'y' among the verdicts on it. */
const yesShare = (on: readonly Turn[]) => on.filter((v) => v.action.value === 'y').length / on.length;
/** Their majority: 1, 0, or 1/2 on a tie. */
const majority = (on: readonly Turn[]) => Math.sign(yesShare(on) - 0.5) / 2 + 0.5;

/**
 * A verdict's probability of 'y' under the judge's policy, read from the untempered
 * log-probability the turn recorded for its first token, the verdict letter: exp(lp) when it
 * said 'y', 1 - exp(lp) when it said 'n'. That takes the two letters to hold all the mass at
 * that token, as a judge taught to answer y or n does (measured on a five-roles judge's 3,975
 * verdicts: the recorded entropy there matched the two-letter entropy to 0.002 on average).
 * Throws where a verdict has no log-probabilities (a remote model's) or does not start with its letter.
 */
export function yesProbability(v: Turn): number {
  const lp = v.logProbs?.[0];
  if (lp === undefined || v.text.trimStart()[0] !== v.action.value)
    throw new Error(
      `peer aggregate 'probability': verdict ${JSON.stringify(v.text)} on ${v.task?.id ?? '?'} has no log-probability for a first token that is its letter; use 'mean' or 'majority'`,
    );
  const p = Math.exp(lp);
  return v.action.value === 'y' ? p : 1 - p;
}
const probability = (on: readonly Turn[]) => on.reduce((a, v) => a + yesProbability(v), 0) / on.length;

/**
 * A reward from peers' judgement (Co-RL, CoMAS; a learned judge in the loop as in SPARK or
 * Cooper): an answer turn of `role` earns the share of 'y' among the valid verdicts that
 * other turns of its episode filed on its task id (`turn.task.id`: the arena files an answer
 * and the verdicts on it under one id), or with `aggregate: majority` their majority vote, or
 * with `aggregate: probability` their mean probability of 'y'. No
 * label is read. An answer that does not parse earns `invalid`; a valid answer nobody judged
 * abstains (null), as does every other turn.
 */
export class PeerJudge implements Judge {
  readonly name: string;
  readonly roles: ReadonlySet<RoleId>;
  private readonly invalid: number;
  private readonly reduce: (on: readonly Turn[]) => number;

  constructor(options: PeerOptions = {}) {
    this.name = options.name ?? 'peer';
    this.roles = roleSet(options.role ?? 'solver', this.name);
    this.invalid = options.invalid ?? 0;
    this.reduce = { mean: yesShare, majority, probability }[options.aggregate ?? 'mean'];
  }

  score(batch: readonly Episode[]): BatchRewards {
    return batch.map((e) => {
      const verdicts = verdictsByTask(e, this.roles);
      return e.turns.map((t) => {
        if (!this.roles.has(t.role)) return null;
        if (!t.action.valid) return this.invalid;
        const on = t.task ? (verdicts.get(t.task.id) ?? []) : [];
        return on.length ? this.reduce(on) : null;
      });
    });
  }
}

/**
 * Whether peer rewards track the truth (RLER's warning: peers' self-bias and noise can
 * reward wrong answers): over the judged answers of `answering` roles, `truth(turn)` says
 * whether each valid one is right. Returns the answers' accuracy (an invalid one is wrong), the Pearson correlation between
 * peer reward and correctness (absent when either is constant), the share of verdict pairs
 * on one answer that agree, the verdicts' accuracy and their share of 'y', and the share of
 * verdict turns that parse as 'y' or 'n' (`judge_valid_rate`).
 */
export function peerDiagnostics(
  episodes: readonly Episode[],
  answering: ReadonlySet<RoleId>,
  truth: (t: Turn, e: Episode) => boolean,
): Record<string, number> {
  const pairs: [number, number][] = [];
  let agree = 0,
    pairsSeen = 0,
    right = 0,
    verdictCount = 0,
    yes = 0,
    answers = 0,
    correct = 0,
    asked = 0,
    parsed = 0;
  for (const e of episodes) {
    const verdicts = verdictsByTask(e, answering);
    // every verdict turn, parsed or not: judges that stop writing a verdict starve peer reward first
    for (const t of e.turns)
      if (!answering.has(t.role) && t.task) {
        asked++;
        parsed += t.action.valid && (t.action.value === 'y' || t.action.value === 'n') ? 1 : 0;
      }
    for (const t of e.turns) {
      if (!answering.has(t.role)) continue;
      const ok = t.action.valid && truth(t, e);
      answers++;
      correct += ok ? 1 : 0;
      if (!t.action.valid) continue;
      const on = t.task ? (verdicts.get(t.task.id) ?? []) : [];
      if (on.length) pairs.push([yesShare(on), ok ? 1 : 0]);
      for (const v of on) {
        verdictCount++;
        yes += v.action.value === 'y' ? 1 : 0;
        right += (v.action.value === 'y') === ok ? 1 : 0;
      }
      for (let a = 0; a < on.length; a++)
        for (let b = a + 1; b < on.length; b++) {
          pairsSeen++;
          agree += on[a].action.value === on[b].action.value ? 1 : 0;
        }
    }
  }
  const m: Record<string, number> = {};
  if (answers) m.accuracy = correct / answers;
  if (verdictCount) Object.assign(m, { judge_accuracy: right / verdictCount, yes_rate: yes / verdictCount });
  if (pairsSeen) m.agreement = agree / pairsSeen;
  if (asked) m.judge_valid_rate = parsed / asked;
  const r = pearson(pairs);
  if (r !== null) m.reward_truth_corr = r;
  return m;
}

function pearson(xy: readonly [number, number][]): number | null {
  if (xy.length < 2) return null;
  const mx = xy.reduce((s, [x]) => s + x, 0) / xy.length;
  const my = xy.reduce((s, [, y]) => s + y, 0) / xy.length;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (const [x, y] of xy) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}
