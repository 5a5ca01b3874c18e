/** Worker i's share of a batch: integers that differ by at most one and sum to the batch. */
export function share(batch: number, workers: number, i: number): number {
  return Math.floor(batch / workers) + (i < batch % workers ? 1 : 0);
}
