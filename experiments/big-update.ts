/**
 * One update of 4,096 samples of the reference model (sequences of 48 tokens, as the bench
 * trains: one prompt token, 47 completion tokens, token-mean) on the wasm backend, in passes
 * of the trainer's microBatch; prints the wall time and the peak RSS of the process.
 * `--one-shot` takes the whole batch in one pass instead, as the trainer did before
 * micro-batching; at 4,096 samples that aborts the wasm backend.
 *
 * Measured on an idle machine with native training: passes of 256, 8.7 s and 580 MB peak RSS;
 * --one-shot is refused before any work (5.55 GiB, over a wasm memory's 4 GiB). On tfjs's
 * kernels (accelerate off), with two experiments busy on both cores: 92.6 s and 2.47 GB, and
 * --one-shot aborted after 27 s at 4.37 GB.
 *
 *   npx tsx experiments/big-update.ts [--samples 4096] [--micro-batch 256] [--one-shot] [--backend wasm]
 */
import { parseArgs } from 'node:util';
import { initBackend, type BackendChoice } from '../src/backend/index.js';
import { REFERENCE_JOBS, REFERENCE_MODEL } from '../src/bench/workload.js';
import { TinyLM } from '../src/models/tinylm.js';
import { DEFAULT_TRAINER, JointTrainer, type TrainSample } from '../src/rl/trainer.js';
import { Rng } from '../src/util/rng.js';

const { values: opts } = parseArgs({
  options: {
    samples: { type: 'string', default: '4096' },
    'micro-batch': { type: 'string', default: String(DEFAULT_TRAINER.microBatch) },
    'one-shot': { type: 'boolean', default: false },
    backend: { type: 'string', default: 'wasm' },
  },
});
const samples = Number(opts.samples);
const microBatch = opts['one-shot'] ? samples : Number(opts['micro-batch']);
const mb = (kb: number) => Math.round(kb / 1024); // maxRSS is in kilobytes

const info = await initBackend(opts.backend as BackendChoice);
const model = new TinyLM(REFERENCE_MODEL);
const trainer = new JointTrainer({ m: model }, { microBatch });
const rng = new Rng(1);
const batch: TrainSample[] = Array.from({ length: samples }, () => {
  const seq = Array.from({ length: REFERENCE_JOBS.seq }, () => rng.int(REFERENCE_MODEL.vocabSize));
  const completion = seq.slice(1);
  return {
    model: 'm',
    role: 'solver',
    prompt: seq.slice(0, 1),
    completion,
    oldLogProbs: completion.map(() => rng.normal() * 0.1 - 4),
    advantages: rng.normal(),
  };
});
const rssBefore = process.resourceUsage().maxRSS;
console.log(
  `backend ${info.chosen}; ${samples} samples x ${REFERENCE_JOBS.seq} tokens in passes of ${microBatch}; peak RSS before the update ${mb(rssBefore)} MB`,
);
const t0 = performance.now();
const step = trainer.step(batch).m;
const seconds = (performance.now() - t0) / 1000;
console.log(
  `update: ${seconds.toFixed(1)} s (${Math.round(step.tokens / seconds)} tokens/s), loss ${step.loss.toFixed(4)}, grad norm ${step.gradNorm.toFixed(3)}, skipped ${step.skipped}`,
);
console.log(`peak RSS: ${mb(process.resourceUsage().maxRSS)} MB`);
trainer.dispose();
model.dispose();
