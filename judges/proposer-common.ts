/**
 * What proposer rewards share: the solver's success on the task a proposal became, read from
 * the solver turns of the same episode (the arena puts the attempts there). Internal to judges/.
 */
import { taskOf } from '../src/core/groups.js';
import type { Episode, RoleId, Turn } from '../src/core/types.js';
import { majorityLabel, voteOf } from '../src/core/vote.js';
import { finiteOption, roleSet } from '../src/core/judge-common.js';
import { verdictsByTask } from './peer.js';
import type { RoleOption, VerifyFn } from '../src/core/judge.js';

/**
 * Where p comes from: the environment's answer ('verifier'), the solver's own vote ('vote',
 * label-free), or its peers' verdicts ('peer', label-free: a judge in the loop).
 */
export type SuccessSource = 'verifier' | 'vote' | 'peer';

/**
 * p for the proposal of `episode`: the share of its solver attempts that verify against the
 * environment's answer, or (label-free, R-Zero) the share that agree with their majority
 * answer, or the mean over attempts of the share of 'y' among the verdicts other roles filed
 * on the attempt's task id (the `peer` judge's reward; an attempt that does not parse counts
 * 0, one nobody judged is left out). null when the episode has no solver attempts (an
 * invalid proposal) or, with 'peer', none was judged.
 */
export function solverSuccess(
  episode: Episode,
  solvers: ReadonlySet<RoleId>,
  source: SuccessSource,
  verify?: VerifyFn,
): number | null {
  const attempts = episode.turns.filter((t) => solvers.has(t.role));
  if (attempts.length === 0) return null;
  if (source === 'vote') {
    const { label, votes } = majorityLabel(attempts.map(voteOf));
    return label === null ? 0 : votes / attempts.length;
  }
  if (source === 'peer') {
    const verdicts = verdictsByTask(episode, solvers);
    const shares = attempts.flatMap((t) => {
      if (!t.action.valid) return [0];
      const on = t.task ? (verdicts.get(t.task.id) ?? []) : [];
      return on.length ? [on.filter((v) => v.action.value === 'y').length / on.length] : [];
    });
    return shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : null;
  }
  const right = attempts.filter((t) => t.action.valid && verify!(taskOf(episode, t), t.text) === true).length;
  return right / attempts.length;
}

/** The proposer turns of a batch, with where they sit. */
export function proposals(
  batch: readonly Episode[],
  roles: ReadonlySet<RoleId>,
): { e: number; t: number; turn: Turn }[] {
  return batch.flatMap((ep, e) => ep.turns.flatMap((turn, t) => (roles.has(turn.role) ? [{ e, t, turn }] : [])));
}

function checkSource(judge: string, v: unknown): SuccessSource {
  if (v === 'verifier' || v === 'vote' || v === 'peer') return v;
  throw new Error(`judge '${judge}': option 'p' must be 'verifier', 'vote' or 'peer', got ${JSON.stringify(v)}`);
}

/** Options every proposer reward reading p takes. */
export interface ProposerOptions {
  /** the proposer roles rewarded (default 'proposer') */
  role?: RoleOption;
  /** the roles whose attempts measure p (default 'solver') */
  solver?: RoleOption;
  /** p from the environment's answer ('verifier'), the solver's own vote ('vote') or its peers' verdicts ('peer') */
  p?: SuccessSource;
  /** reward of an invalid proposal (default -1) */
  invalid?: number;
  name?: string;
}

/** Those options checked, with the judge's own defaults for its name and for p. */
export function proposerSettings(
  o: ProposerOptions,
  defaults: { name: string; p: SuccessSource },
  verify: VerifyFn | undefined,
) {
  const name = o.name ?? defaults.name;
  const source = checkSource(name, o.p ?? defaults.p);
  const needsAnswer = source === 'verifier';
  if (needsAnswer && typeof verify !== 'function')
    throw new Error(`judge '${name}': p 'verifier' needs the task family's verifier`);
  return {
    name,
    source,
    needsAnswer,
    roles: roleSet(o.role ?? 'proposer', name),
    solvers: roleSet(o.solver ?? 'solver', name),
    invalid: finiteOption(o.invalid ?? -1, name, 'invalid'),
  };
}
