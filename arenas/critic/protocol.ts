/** What the critic arena's protocol and its metrics share: the check's comparison group and the per-step verdict. */

/** The comparison group of a critic's checks (checkFirst), apart from its verdicts. */
export const CHECK_SCOPE = 'episode:check';

/**
 * A per-step critic's verdict from its answers in step order ('y', 'n', null for invalid): the
 * first step it says 'n' to, '0' when it says 'y' to all, null when an invalid answer comes
 * before any 'n' (what follows a rejected step does not change the verdict).
 */
export function firstRejected(marks: readonly (string | null)[]): string | null {
  for (const [k, m] of marks.entries()) {
    if (m === null) return null;
    if (m === 'n') return String(k + 1);
  }
  return '0';
}
