/** Words of a text for retrieval: lower case, letters and digits only. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Okapi BM25 scores of each document for a query (Robertson and Zaragoza's form, with the
 * Lucene idf ln(1 + (N - n + 0.5) / (n + 0.5)), which stays positive when a word is in most
 * documents): sum over query words of idf · tf (k1 + 1) / (tf + k1 (1 - b + b · len / avglen)).
 * A query word counts once per occurrence in the query, as Lucene does.
 */
export function bm25(docs: readonly string[][], query: readonly string[], k1 = 1.2, b = 0.75): number[] {
  const n = docs.length;
  if (!n) return [];
  const avg = docs.reduce((s, d) => s + d.length, 0) / n || 1;
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  return docs.map((d) => {
    const tf = new Map<string, number>();
    for (const w of d) tf.set(w, (tf.get(w) ?? 0) + 1);
    let score = 0;
    for (const w of query) {
      const f = tf.get(w) ?? 0;
      if (!f) continue;
      const m = df.get(w)!;
      const idf = Math.log(1 + (n - m + 0.5) / (m + 0.5));
      score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.length) / avg));
    }
    return score;
  });
}
