import { Worker, type TransferListItem } from 'node:worker_threads';

/**
 * Whether this module runs compiled (dist/, what the package ships) or from its TypeScript
 * source (the tests and scripts, through tsx).
 */
const compiled = import.meta.url.endsWith('.js');

/**
 * Starts a worker thread running the module at `entry`, named by its TypeScript file
 * (`new URL('./replica.ts', import.meta.url)`), with `data` as its workerData. Compiled, the
 * thread runs the `.js` beside it directly; from source, it first registers tsx's loader,
 * which does not reach worker threads from the parent (ts-worker.mjs).
 */
export function startTsWorker(
  entry: URL,
  data: Record<string, unknown>,
  transferList: TransferListItem[] = [],
): Worker {
  if (compiled) return new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), { workerData: data, transferList });
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), {
    workerData: { ...data, entry: entry.href },
    transferList,
  });
}
