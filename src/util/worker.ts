import { Worker, type TransferListItem } from 'node:worker_threads';

/** Starts a worker thread running the TypeScript module at `entry` (a file URL), with `data` as its workerData. */
export function startTsWorker(entry: URL, data: Record<string, unknown>, transferList: TransferListItem[] = []): Worker {
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { ...data, entry: entry.href }, transferList });
}
