/** Majority vote over parsed answers: what the majority judge, maj@N and the rollout metrics count. */
import type { Turn } from './types.js';

/** Result of {@link majorityLabel}. */
export interface MajorityResult {
  /** the most common valid answer; null when there is no valid answer */
  label: string | null;
  /** how many valid answers equal `label` (0 when `label` is null) */
  votes: number;
  /** how many valid (non-null) answers were counted */
  total: number;
}

/** A turn's vote: its parsed answer when the action is valid, null (no vote) otherwise. */
export function voteOf(turn: Turn): string | null {
  const a = turn.action;
  return a.valid && typeof a.value === 'string' ? a.value : null;
}

/**
 * The majority answer among `values`, where `null` marks an invalid (unparsed) answer.
 *
 * - Only non-null values are counted (`total`); an invalid answer never wins and never
 *   counts, however many there are.
 * - The label is the value with the most votes. Ties are broken deterministically in favour
 *   of the tied value whose FIRST occurrence comes earliest in `values` (so the result does
 *   not depend on hash or sort order, and a rerun gives the same label).
 * - Values are compared as exact strings: normalising answers ('5' vs '5.0') is the job of
 *   the role that parsed them.
 * - No valid value → `{ label: null, votes: 0, total: 0 }`.
 *
 * Metrics use it too: TTRL's label accuracy is `label === task.answer`, maj@N is the same.
 */
export function majorityLabel(values: readonly (string | null)[]): MajorityResult {
  // Map iterates in insertion order = order of first appearance, which gives the tie-break.
  const counts = new Map<string, number>();
  let total = 0;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    counts.set(v, (counts.get(v) ?? 0) + 1);
    total++;
  }
  let label: string | null = null;
  let votes = 0;
  for (const [v, n] of counts) {
    // strictly greater: an equal count later in the order never displaces the earlier value
    if (n > votes) {
      label = v;
      votes = n;
    }
  }
  return { label, votes, total };
}
