/**
 * Helpers shared by the judges: role selection and group checks. Internal to judges/.
 */
import { comparisonGroup } from './groups.js';
import type { BatchRewards, Episode, RoleId, Turn } from './types.js';
import { DEFAULT_ROLE, type RoleOption } from './judge.js';

/**
 * The set of roles named by a `role` option (default {@link DEFAULT_ROLE}). Throws, naming
 * the judge, on an empty list or a non-string / empty role id, so a typo in a config fails
 * at construction instead of silently producing an all-null judge.
 */
export function roleSet(role: RoleOption | undefined, judge: string): ReadonlySet<RoleId> {
  const roles: readonly unknown[] = role === undefined ? [DEFAULT_ROLE] : typeof role === 'string' ? [role] : role;
  if (!Array.isArray(roles) || roles.length === 0) {
    throw new Error(`judge '${judge}': option 'role' must be a role id or a non-empty list of role ids`);
  }
  for (const r of roles) {
    if (typeof r !== 'string' || r === '') {
      throw new Error(`judge '${judge}': option 'role' must contain non-empty strings, got ${show(r)}`);
    }
  }
  return new Set(roles as RoleId[]);
}

/** Where a turn sits in a batch: `batch[e].turns[t]`. */
export interface TurnAt {
  e: number;
  t: number;
  episode: Episode;
  turn: Turn;
}

/**
 * The turns of `roles` in a batch, pooled by comparison group (the arena names each turn's),
 * in batch order: what a group statistic (a majority vote, a normalisation) runs over.
 */
export function turnsByGroup(batch: readonly Episode[], roles: ReadonlySet<RoleId>): Map<string, TurnAt[]> {
  const out = new Map<string, TurnAt[]>();
  batch.forEach((episode, e) =>
    episode.turns.forEach((turn, t) => {
      if (!roles.has(turn.role)) return;
      const key = comparisonGroup(episode, turn);
      const list = out.get(key);
      if (list) list.push({ e, t, episode, turn });
      else out.set(key, [{ e, t, episode, turn }]);
    }),
  );
  return out;
}

/** A rewards array shaped like `batch`, every entry `null` (abstain). */
export function nullRewards(batch: readonly Episode[]): BatchRewards {
  return batch.map((ep) => ep.turns.map(() => null));
}

/** A finite-number check used for options, with an error naming judge and option. */
export function finiteOption(value: number, judge: string, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new Error(`judge '${judge}': option '${option}' must be a finite number, got ${show(value)}`);
  }
  return value;
}

/** A value as it should appear in an error message: strings quoted, NaN shown as NaN. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || value === undefined) return String(value);
  return JSON.stringify(value) ?? String(value);
}
