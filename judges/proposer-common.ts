/**
 * What proposer rewards share: the solver's success on the task a proposal became, read from
 * the solver turns of the same episode (the arena puts the attempts there). Internal to judges/.
 */
import { taskOf } from '../src/core/groups.js';
import type { Episode, RoleId, Turn } from '../src/core/types.js';
import { majorityLabel, voteOf } from '../src/core/vote.js';
import { finiteOption, roleSet } from '../src/core/judge-common.js';
import type { RoleOption, VerifyFn } from '../src/core/judge.js';

/** Where p comes from: the environment's answer ('verifier') or the solver's own vote ('vote', label-free). */
export type SuccessSource = 'verifier' | 'vote';

/**
 * p for the proposal of `episode`: the share of its solver attempts that verify against the
 * environment's answer, or (label-free, R-Zero) the share that agree with their majority
 * answer. null when the episode has no solver attempts (an invalid proposal).
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
  if (v === 'verifier' || v === 'vote') return v;
  throw new Error(`judge '${judge}': option 'p' must be 'verifier' or 'vote', got ${JSON.stringify(v)}`);
}

/** Options every proposer reward reading p takes. */
export interface ProposerOptions {
  /** the proposer roles rewarded (default 'proposer') */
  role?: RoleOption;
  /** the roles whose attempts measure p (default 'solver') */
  solver?: RoleOption;
  /** p from the environment's answer ('verifier') or the solver's own vote ('vote', label-free) */
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
