/**
 * The share of tasks in the most common difficulty cell (a cell: one value of the family's
 * `measure`): 1 when a proposer writes one kind of task only. The collapse watch reads it.
 */
export function topCellShare(measures: ReadonlyArray<Record<string, number>>): number {
  const counts = new Map<string, number>();
  for (const m of measures) {
    const cell = JSON.stringify(m);
    counts.set(cell, (counts.get(cell) ?? 0) + 1);
  }
  return measures.length ? Math.max(...counts.values()) / measures.length : NaN;
}
