/**
 * Helpers shared by the judges: role selection and group checks. Internal to judges/.
 */
import type { Episode, GroupRewards, RoleId } from '../src/core/types.js';
import { DEFAULT_ROLE, type RoleOption } from './types.js';

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

/**
 * Throws unless every episode carries the same `group` id. Judges score one group at a
 * time; a mixed batch would make group statistics (majority, normalisation) meaningless.
 */
export function assertOneGroup(group: readonly Episode[], judge: string): void {
  const id = group[0]?.group;
  const other = group.find((ep) => ep.group !== id);
  if (other !== undefined) {
    throw new Error(`judge '${judge}': episodes of different groups ('${id}', '${other.group}') scored together`);
  }
}

/** A rewards array shaped like `group`, every entry `null` (abstain). */
export function nullRewards(group: readonly Episode[]): GroupRewards {
  return group.map((ep) => ep.turns.map(() => null));
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
