/**
 * Pretraining steps/s of a pretrain config's model on one thread against every core, measured
 * in one process in alternating blocks (so a busy machine slows both alike). A Hugging Face
 * model trains in the learner's thread; its native matrix products may use every core
 * (`loadNative().setThreads`), as `coevolve pretrain` now lets them. Prints one JSON line per
 * block and a summary with the median steps/s of each and their ratio.
 *
 *   npx tsx experiments/pretrain-speed.ts [--config configs/pretrain/qwen3-chat-add2.yaml] [--steps 5] [--rounds 3]
 */
import { describeBackend, initBackend } from '../src/backend/index.js';
import { loadNative } from '../src/backend/native/library.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { pretrainCorpus } from '../src/pretrain/corpus.js';
import { loadPretrainConfig } from '../src/pretrain/schema.js';
import { buildExamples, buildModel } from '../src/pretrain/setup.js';
import { taskFamily } from '../src/registry.js';
import { arg } from './script.js';
import { availableParallelism } from 'node:os';

const config = loadPretrainConfig(arg('config', 'configs/pretrain/qwen3-chat-add2.yaml'));
const steps = Number(arg('steps', '5'));
const rounds = Number(arg('rounds', '3'));
const info = await initBackend(config.backend, config.accelerate);
console.error(describeBackend(info));
const native = loadNative();
const cores = availableParallelism();
const family = taskFamily(config.task.family);
const corpus = pretrainCorpus(config, family);
const trainee = await buildModel(config);
const { examples } = await buildExamples(config, trainee, family, corpus, (l) => console.error(l));
const trainer = new SupervisedTrainer(trainee.model, examples, {
  batchSize: config.train.batchSize,
  lr: config.train.lr,
  seed: config.seed,
});
trainer.step(); // warm-up: kernels compiled, buffers sized
const rates: Record<number, number[]> = { 1: [], [cores]: [] };
for (let r = 0; r < rounds; r++)
  for (const threads of [1, cores]) {
    native?.setThreads(threads);
    const t0 = performance.now();
    for (let s = 0; s < steps; s++) trainer.step();
    const rate = steps / ((performance.now() - t0) / 1000);
    rates[threads].push(rate);
    console.log(JSON.stringify({ round: r, threads, stepsPerSecond: Number(rate.toFixed(3)) }));
  }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify({
    config: config.name,
    native: native?.name ?? null,
    cores,
    oneThread: Number(median(rates[1]).toFixed(3)),
    everyCore: Number(median(rates[cores]).toFixed(3)),
    ratio: Number((median(rates[cores]) / median(rates[1])).toFixed(2)),
  }),
);
trainer.dispose();
trainee.model.dispose();
