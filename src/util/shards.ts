/** How many threads share a batch of `length` items of model `id`: one, or one per replica and this thread (never more than the items). */
export function threadsFor(
  length: number,
  replicas: { readonly count: number; has(id: string): boolean } | undefined,
  id: string,
): number {
  return replicas?.has(id) ? Math.min(length, 1 + replicas.count) : 1;
}

/** Where shard k of n starts: sizes differ by at most one, the larger first. */
export function shardStart(length: number, n: number, k: number): number {
  return k * Math.floor(length / n) + Math.min(k, length % n);
}

/** `items` cut into n contiguous shards (see shardStart). */
export function shards<T>(items: readonly T[], n: number): T[][] {
  return Array.from({ length: n }, (_, k) =>
    items.slice(shardStart(items.length, n, k), shardStart(items.length, n, k + 1)),
  );
}
