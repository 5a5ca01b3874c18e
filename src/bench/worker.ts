// One bench worker: its own tensor backend and its own replica of the reference model.
// Training is data-parallel: each worker computes the gradient of its share of the batch,
// writes it to a shared buffer, waits for the others, averages, and applies the same Adam
// step, so the replicas stay identical without a parameter server.
import * as tf from '@tensorflow/tfjs';
import { adam } from '../backend/fused/adam.js';
import { parentPort, workerData } from 'node:worker_threads';
import { initBackend, type BackendChoice } from '../backend/index.js';
import { loadNative } from '../backend/native/library.js';
import type { Accelerate } from '../backend/accelerate.js';
import { TinyLM } from '../models/tinylm.js';
import { Rng } from '../util/rng.js';
import { REFERENCE_MODEL, generateJob, trainGrads } from './workload.js';

interface Setup {
  backend: BackendChoice;
  accelerate: Accelerate;
  index: number;
  workers: number;
  threads: number;
  total: number;
  shared: SharedArrayBuffer;
  sync: SharedArrayBuffer;
}
const setup = workerData as Setup;
const info = await initBackend(setup.backend, setup.accelerate);
// the library's thread pool is the process's: every worker sets the same count
if (info.native) loadNative()?.setThreads(setup.threads);
const model = new TinyLM(REFERENCE_MODEL);
const names = model.variables().map((v) => v.name);
const sizes = model.variables().map((v) => v.size);
const total = sizes.reduce((a, b) => a + b, 0);
const slots = Array.from({ length: setup.workers }, (_, w) => new Float32Array(setup.shared, w * total * 4, total));
const barrier = new Int32Array(setup.sync);
const optimizer = adam(1e-4, 0.9, 0.999, 1e-8);
const rng = new Rng(1000 + setup.index);

/** Sense-reversing barrier over [count, generation]. */
function wait(): void {
  const gen = Atomics.load(barrier, 1);
  if (Atomics.add(barrier, 0, 1) === setup.workers - 1) {
    Atomics.store(barrier, 0, 0);
    Atomics.add(barrier, 1, 1);
    Atomics.notify(barrier, 1);
  } else {
    while (Atomics.load(barrier, 1) === gen) Atomics.wait(barrier, 1, gen);
  }
}

function trainStep(batch: number): number {
  // Each worker's token-mean is weighted by its share of the batch, so the sum of the
  // workers' gradients is the gradient of the token-mean over the whole batch.
  const { grads, loss } = trainGrads(model, batch, rng, batch / setup.total);
  let offset = 0;
  names.forEach((n, i) => {
    slots[setup.index].set(grads[n].dataSync(), offset);
    offset += sizes[i];
  });
  tf.dispose(Object.values(grads));
  wait();
  const summed = new Float32Array(total);
  for (const slot of slots) for (let j = 0; j < total; j++) summed[j] += slot[j];
  wait(); // nobody overwrites a slot until everyone has read it
  offset = 0;
  const named: tf.NamedTensorMap = {};
  model.variables().forEach((v, i) => {
    named[names[i]] = tf.tensor(summed.subarray(offset, offset + sizes[i]), v.shape);
    offset += sizes[i];
  });
  optimizer.applyGradients(named as Parameters<typeof optimizer.applyGradients>[0]);
  tf.dispose(Object.values(named));
  return loss;
}

parentPort!.on('message', (msg: { job: 'generate' | 'train' | 'checksum'; batch: number }) => {
  if (msg.job === 'generate') parentPort!.postMessage({ seconds: generateJob(model, msg.batch, rng) });
  else if (msg.job === 'train') parentPort!.postMessage({ loss: trainStep(msg.batch) });
  else
    parentPort!.postMessage({
      checksum: tf.tidy(() => model.variables().reduce((s, v) => s + v.sum().dataSync()[0], 0)),
    });
});
parentPort!.postMessage({ ready: true, native: info.native, fused: info.fused });
