/**
 * How close can any ranking from k pairwise verdicts come to the true order of N candidates?
 * An exact search over every adaptive plan of k verdicts (each verdict's pair chosen from the
 * ones before) and every ranking, ties allowed, read off each outcome, with all N! true orders
 * equally likely and an exact judge (whose full round robin is the true order). It prints the
 * best expected Spearman: the ceiling of a bracket's N - 1 verdicts, whatever the bracket.
 *
 *   npx tsx experiments/tournament-bound.ts [--n 4] [--max 5]
 */
import { spearman } from '../judges/tournament.js';
import { arg } from './script.js';

const n = Number(arg('n', '4'));
const most = Number(arg('max', String(n + 1)));
if (!(Number.isInteger(n) && n >= 2 && n <= 5))
  throw new Error(`--n: 2 to 5 (the search is over every plan), got ${arg('n')}`);

function permutations(k: number): number[][] {
  if (k === 0) return [[]];
  return permutations(k - 1).flatMap((p) =>
    Array.from({ length: k }, (_, i) => [...p.slice(0, i), k - 1, ...p.slice(i)]),
  );
}
// orders[t][c]: candidate c's quality under true order t (higher is better)
const orders = permutations(n);
const pairs = Array.from({ length: n }, (_, a) =>
  Array.from({ length: n - a - 1 }, (_, j) => [a, a + j + 1] as const),
).flat();
// every ranking with ties: a score per candidate from 0 to n - 1, not all equal
const rankings: number[][] = [];
for (let code = 0; code < n ** n; code++) {
  const r = Array.from({ length: n }, (_, i) => Math.floor(code / n ** i) % n);
  if (new Set(r).size > 1) rankings.push(r);
}
const rho = rankings.map((r) => orders.map((t) => spearman(r, t)));

const memo = new Map<string, number>();
/** The best total Spearman over the true orders in `left` with `k` verdicts still to take. */
function best(left: readonly number[], k: number): number {
  const key = `${k}:${left.join(',')}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  let out = Math.max(...rho.map((row) => left.reduce((s, t) => s + row[t], 0)));
  if (k > 0 && left.length > 1) {
    for (const [a, b] of pairs) {
      const wins = left.filter((t) => orders[t][a] > orders[t][b]);
      if (wins.length === 0 || wins.length === left.length) continue;
      out = Math.max(
        out,
        best(wins, k - 1) +
          best(
            left.filter((t) => orders[t][a] < orders[t][b]),
            k - 1,
          ),
      );
    }
  }
  memo.set(key, out);
  return out;
}

const all = orders.map((_, t) => t);
for (let k = 1; k <= most; k++)
  console.log(JSON.stringify({ n, verdicts: k, bestExpectedSpearman: +(best(all, k) / orders.length).toFixed(4) }));
