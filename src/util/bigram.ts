/** Entropy (bits) of the character bigrams of a set of texts: it falls when proposals collapse. */
export function bigramEntropy(texts: readonly string[]): number {
  const counts = new Map<string, number>();
  let n = 0;
  for (const s of texts)
    for (let i = 0; i + 1 < s.length; i++) {
      const g = s.slice(i, i + 2);
      counts.set(g, (counts.get(g) ?? 0) + 1);
      n++;
    }
  let h = 0;
  for (const c of counts.values()) h -= (c / n) * Math.log2(c / n);
  return h;
}
