// Entry of every worker thread: Node's TypeScript loader hooks (tsx) do not reach worker
// threads from the parent, so each worker registers them itself before importing its
// TypeScript module, named in workerData.entry.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
