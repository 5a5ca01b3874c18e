/**
 * What `sharedRows` buys a real-architecture pretrain: steps a second of one pretrain config's
 * model and examples trained in full (every row of the 151,669-token head) and with the rows no
 * example uses trained as one (src/models/hf/shared-rows.ts), in alternating rounds in one
 * process, so both see the same machine. Each round trains a fresh model `--steps` steps from
 * the same seed; prints each round's steps a second and the median ratio.
 *
 * `--generate DIR` times rollouts instead: DIR, a base made with sharedRows, loaded frozen (as an
 * adapter's base is) with its head on the compact rows and with the full head, sampling
 * `--new` tokens at temperature 1 for each of its first `--rows` held-out prompts.
 *
 *   npx tsx experiments/shared-rows-speed.ts [--config configs/pretrain/qwen3-chat-add2.yaml] [--steps 20] [--rounds 3]
 *   npx tsx experiments/shared-rows-speed.ts --generate DIR [--rows 128] [--new 6] [--rounds 3]
 */
import { initBackend } from '../src/backend/index.js';
import { loadNative } from '../src/backend/native/library.js';
import { resolveTaskFamily } from '../src/registry.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { pretrainCorpus } from '../src/pretrain/corpus.js';
import { loadPretrainConfig } from '../src/pretrain/schema.js';
import { buildExamples, buildModel, shareUnusedRows } from '../src/pretrain/setup.js';
import { arg } from './script.js';
import { HfCausalLM } from '../src/models/hf/model.js';
import { loadHfTokenizer } from '../src/models/hf/text.js';
import { generate } from '../src/models/generate.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { PRETRAIN_RECORD } from '../src/pretrain/save.js';

const rounds = Number(arg('rounds', '3'));
const made = arg('generate', '');
if (made) {
  await generationRatio(made);
  process.exit(0);
}
const config = loadPretrainConfig(arg('config', 'configs/pretrain/qwen3-chat-add2.yaml'));
if (!config.architecture || config.init)
  throw new Error('--config: a pretrain of a fresh architecture model (no init:)');
const steps = Number(arg('steps', '20'));
await initBackend(config.backend, config.accelerate);
loadNative()?.setThreads(1);
const family = await resolveTaskFamily(config.task.family, config.plugins);
const corpus = pretrainCorpus(config, family);

/** Steps a second of `steps` steps (after one untimed warm-up step) of a fresh model, shared or full. */
async function rate(shared: boolean): Promise<number> {
  // a line before each measurement: at the full head's 0.65 steps a second, 20 steps take about 30 s
  console.log(`${shared ? 'shared rows' : 'full head'}: ${steps} steps...`);
  const trainee = await buildModel(config);
  const { examples } = await buildExamples(config, trainee, family, corpus, () => {});
  if (shared) shareUnusedRows(trainee, examples, true, () => {});
  const trainer = new SupervisedTrainer(trainee.model, examples, {
    batchSize: config.train.batchSize,
    lr: config.train.lr,
    seed: config.seed,
  });
  trainer.step();
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) trainer.step();
  const perSecond = steps / ((performance.now() - t0) / 1000);
  trainer.dispose();
  trainee.model.dispose();
  if (trainee.base.kind === 'hf') trainee.base.model.dispose();
  return perSecond;
}

const ratios: number[] = [];
for (let r = 1; r <= rounds; r++) {
  const full = await rate(false);
  const shared = await rate(true);
  ratios.push(shared / full);
  console.log(
    `round ${r}: full ${full.toFixed(3)} steps/s, shared ${shared.toFixed(3)} steps/s, ${(shared / full).toFixed(2)}x`,
  );
}
ratios.sort((a, b) => a - b);
console.log(
  `${config.name}, batch ${config.train.batchSize}: shared rows ${ratios[Math.floor(rounds / 2)].toFixed(2)}x the full head's steps a second (median of ${rounds} rounds)`,
);

/** Rollout tokens a second of `dir` loaded frozen with its compact head and with the full one, in alternating rounds. */
async function generationRatio(dir: string): Promise<void> {
  await initBackend('auto');
  loadNative()?.setThreads(1);
  const rows = Number(arg('rows', '128'));
  const maxNewTokens = Number(arg('new', '6'));
  const tokenizer = loadHfTokenizer(dir);
  // the base's task family, as its pretrain recorded it
  const { task } = JSON.parse(readFileSync(join(dir, PRETRAIN_RECORD), 'utf8')) as {
    task: { family: string };
  };
  const tasks = readTasksJsonl(join(dir, 'heldout.jsonl'), task.family).slice(0, rows);
  const prompts = tasks.map((t) => tokenizer.prompt(t.prompt, 'solver'));
  const rate = (compactHead: boolean) => {
    const model = HfCausalLM.load(dir, { frozen: true, compactHead });
    generate(model, prompts.slice(0, 4), { maxNewTokens, temperature: 1, seed: 1 }); // warm-up
    const t0 = performance.now();
    const out = generate(model, prompts, { maxNewTokens, temperature: 1, seed: 1, eos: tokenizer.eos });
    const seconds = (performance.now() - t0) / 1000;
    model.dispose();
    return out.reduce((a, g) => a + g.tokens.length, 0) / seconds;
  };
  const ratios: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    const full = rate(false);
    const compact = rate(true);
    ratios.push(compact / full);
    console.log(
      `round ${r}: full head ${full.toFixed(0)} tokens/s, compact ${compact.toFixed(0)} tokens/s, ${(compact / full).toFixed(2)}x`,
    );
  }
  ratios.sort((a, b) => a - b);
  console.log(
    `${dir}, ${rows} rows x ${maxNewTokens} new tokens: the compact head ${ratios[Math.floor(rounds / 2)].toFixed(2)}x the full head's tokens a second (median of ${rounds} rounds)`,
  );
}
