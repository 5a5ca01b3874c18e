/**
 * How far a judge (or a critic) gives one verdict whatever it is shown: its most common valid verdict v,
 * and the least share of v among the showings of any one truth (an invalid verdict is not v).
 * A judge that names v on everything scores 1; one that follows the truth scores 0 (it never
 * says v where the truth is the other); one guessing at a coin's odds scores about 1/2.
 * Undefined unless at least two truths were shown (the src/collapse watcher reads it).
 */
export function constantVerdict(verdicts: ReadonlyArray<{ said: string | null; truth: string }>): number | undefined {
  const counts = new Map<string, number>();
  for (const { said } of verdicts) if (said !== null) counts.set(said, (counts.get(said) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
  const truths = [...new Set(verdicts.map((v) => v.truth))];
  if (top === undefined || truths.length < 2) return undefined;
  return Math.min(
    ...truths.map((truth) => {
      const shown = verdicts.filter((v) => v.truth === truth);
      return shown.filter((v) => v.said === top).length / shown.length;
    }),
  );
}
