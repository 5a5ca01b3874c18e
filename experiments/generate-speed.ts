/**
 * Sampling speed of a Hugging Face base: CPU and wall seconds of `generate` over --rows
 * prompts of --prompt tokens x --new tokens at temperature 1, --reps times (the first rep warms
 * up and is not counted), one native thread:
 *   npx tsx experiments/generate-speed.ts [--base checkpoints/qwen3-chat-add2] [--rows 64] [--prompt 30] [--new 6] [--reps 4]
 * Run it at two commits, alternating, to compare them on a busy machine (CPU seconds move
 * less with the load than wall seconds do). Prints one JSON line per rep and their medians.
 */
import { initBackend } from '../src/backend/index.js';
import { loadNative } from '../src/backend/native/library.js';
import { generate } from '../src/models/generate.js';
import { HfCausalLM } from '../src/models/hf/model.js';
import { arg } from './script.js';

const base = arg('base', 'checkpoints/qwen3-chat-add2');
const [rows, promptLength, newTokens, reps] = ['rows', 'prompt', 'new', 'reps'].map((n, i) => {
  const v = Number(arg(n, ['64', '30', '6', '4'][i]));
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${n}: a positive integer, got ${v}`);
  return v;
});

await initBackend('auto');
loadNative()?.setThreads(1);
const model = HfCausalLM.load(base, { frozen: true });
const prompts = Array.from({ length: rows }, (_, i) =>
  Array.from({ length: promptLength }, (_, j) => (100 + i * 7 + j * 13) % model.config.vocabSize),
);
const cpu: number[] = [];
const wall: number[] = [];
for (let r = 0; r <= reps; r++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  generate(model, prompts, { maxNewTokens: newTokens, temperature: 1, seed: r });
  const w = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const line = { rep: r, wall_s: +w.toFixed(3), cpu_s: +((c.user + c.system) / 1e6).toFixed(3) };
  console.log(JSON.stringify(r === 0 ? { ...line, warmup: true } : line));
  if (r > 0) [cpu, wall].forEach((xs, i) => xs.push(i === 0 ? line.cpu_s : line.wall_s));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tokens = rows * newTokens;
console.log(
  JSON.stringify({
    base,
    rows,
    newTokens,
    cpu_s: median(cpu),
    wall_s: median(wall),
    tokens_per_cpu_s: +(tokens / median(cpu)).toFixed(1),
  }),
);
