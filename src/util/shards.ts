/** Where shard k of n starts: sizes differ by at most one, the larger first. */
export function shardStart(length: number, n: number, k: number): number {
  return k * Math.floor(length / n) + Math.min(k, length % n);
}

/** `items` cut into n contiguous shards (see shardStart). */
export function shards<T>(items: readonly T[], n: number): T[][] {
  return Array.from({ length: n }, (_, k) => items.slice(shardStart(items.length, n, k), shardStart(items.length, n, k + 1)));
}
