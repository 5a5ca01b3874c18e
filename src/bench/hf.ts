// `npm run bench:hf`: the real-architecture workload: a Llama decoder of SmolLM2-135M's shape,
// random weights, timed on generation with a key/value cache and on one clipped policy-gradient
// step with LoRA and in full; and the same jobs in plain PyTorch (./torch_hf.py, with the
// interpreter of `--python`, default /usr/bin/python3) alternating with ours, each ratio from
// one run. Without PyTorch it says why and how to install it. `--shape tiny` for a quick check,
// `--jobs generate,lora,full` (and `long`: 16 x 512-token answers, `--long B,P,N`, the key/value
// cache holding P + N positions; `early` and `early-kept`: the same with rows ending early, one
// id in 64 a stop token, finished rows dropped from the batch or kept in it, ours only; and `memory`: one base with two adapters against two full
// copies), `--reps N`, `--rounds N` (alternations; the median ratio), `--micro N` sequences
// per training pass (default: the whole step in one pass), `--workers N` threads for the
// training jobs (default one per core, as a run's `workers: auto`; 1 trains in this thread with
// every core's products), `--torch off`, `--profile` (where each job's time goes, see
// hf-profile.ts; with `--workers 1` it sees the whole step).
// Each side of each job runs in a fresh process of its own (ours: this script with `--child JOB`,
// which prints one JSON line), so that neither side's memory or threads are alive while the
// other runs.
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { loadNative } from '../backend/native/library.js';
import { generate } from '../models/generate.js';
import { parseHfConfig } from '../models/hf/config.js';
import { weightSpecs } from '../models/hf/layout.js';
import { LoraAdapter } from '../models/hf/lora.js';
import { HfCausalLM } from '../models/hf/model.js';
import { HfPolicy } from '../models/hf/policy.js';
import { Rng } from '../util/rng.js';
import { JointTrainer, type TrainSample } from '../rl/trainer.js';
import { Replicas } from '../parallel/replicas.js';
import { countSgemm, profileRun } from './hf-profile.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const SHAPES = {
  'smollm2-135m': {
    arch: 'LlamaForCausalLM',
    layers: 30,
    d: 576,
    heads: 9,
    kv: 3,
    hd: 64,
    ffn: 1536,
    vocab: 49152,
    theta: 100000,
  },
  // Qwen2.5-0.5B's shape (q/k/v biases, tied head): the memory check, which torch_hf.py does not run
  'qwen2.5-0.5b': {
    arch: 'Qwen2ForCausalLM',
    layers: 24,
    d: 896,
    heads: 14,
    kv: 2,
    hd: 64,
    ffn: 4864,
    vocab: 151936,
    theta: 1000000,
  },
  tiny: { arch: 'LlamaForCausalLM', layers: 2, d: 64, heads: 4, kv: 2, hd: 16, ffn: 160, vocab: 384, theta: 10000 },
} as const;
const shape = option('shape', 'smollm2-135m') as keyof typeof SHAPES;
if (!(shape in SHAPES)) throw new Error(`bench:hf: --shape is one of ${Object.keys(SHAPES).join(', ')}`);
const jobs = option('jobs', 'generate,lora,full').split(',');
const reps = Number(option('reps', '3'));
const [gB, gP, gN] = option('gen', '16,64,64').split(',').map(Number);
// long answers: B prompts of P tokens, N new tokens each (no end token: every row runs to N)
const [lB, lP, lN] = option('long', '16,64,512').split(',').map(Number);
const [tB, tT] = option('train', '8,256').split(',').map(Number);
// sequences per forward/backward pass: the step's gradients add up over passes, as the trainer's
// micro-batches do; by default the whole step is one pass, as PyTorch's is
const micro = Number(option('micro', String(tB)));

/**
 * A model of the shape with random weights (std 0.02, norms 1), built in memory: nothing to
 * download. `frozen` (generation, LoRA): its matrices stay outside the heap when a native
 * sgemm serves the products, as a run loads a base that adapters train on.
 */
function build(frozen: boolean): HfCausalLM {
  const s = SHAPES[shape];
  const config = parseHfConfig({
    architectures: [s.arch],
    vocab_size: s.vocab,
    hidden_size: s.d,
    intermediate_size: s.ffn,
    num_hidden_layers: s.layers,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kv,
    head_dim: s.hd,
    max_position_embeddings: 2048,
    rms_norm_eps: 1e-5,
    rope_theta: s.theta,
    tie_word_embeddings: true,
    hidden_act: 'silu',
  });
  const rng = new Rng(0);
  const tensors = Object.fromEntries(
    weightSpecs(config).map((w) => {
      const n = w.shape.reduce((a, b) => a * b, 1);
      return [
        w.name,
        {
          shape: w.shape,
          data: w.name.endsWith('norm.weight')
            ? new Float32Array(n).fill(1)
            : Float32Array.from({ length: n }, () => 0.02 * rng.normal()),
        },
      ];
    }),
  );
  return new HfCausalLM(config, tensors, undefined, { host: frozen && info.native !== undefined });
}

const randomIds = (rng: Rng, n: number, vocab: number) => Array.from({ length: n }, () => rng.int(vocab));

/**
 * The trainer's own update (JointTrainer: PPO's clipped loss, clip 0.2, a per-sequence advantage,
 * token-mean over the step, Adam at 1e-5) on tB sequences of tT tokens, in passes of `micro`
 * sequences, with `workers` threads as a run's `workers` setting gives them: with more than one,
 * replicas in worker threads take a contiguous share of the sequences each (src/parallel) and
 * every thread's products run on one core. Old log-probs are the uniform policy's, which a
 * randomly initialised model is close to, so the ratios start near 1 as PyTorch's side has them.
 */
async function trainJob(policy: HfPolicy): Promise<{ run: () => void; close: () => Promise<void> }> {
  const vocab = policy.config.vocabSize;
  const replicas =
    workers > 1
      ? await Replicas.start(
          workers - 1,
          { backend: info.chosen as Exclude<BackendChoice, 'auto'>, accelerate: 'auto' },
          { policy },
        )
      : undefined;
  const trainer = new JointTrainer({ policy }, { lr: 1e-5, clipLow: 0.2, clipHigh: 0.2, microBatch: micro }, replicas);
  const samples = (): TrainSample[] =>
    Array.from({ length: tB }, () => {
      const ids = randomIds(rng, tT, vocab);
      const completion = ids.slice(1);
      return {
        model: 'policy',
        role: 'solver',
        prompt: ids.slice(0, 1),
        completion,
        oldLogProbs: completion.map(() => -Math.log(vocab)),
        advantages: rng.normal(),
      };
    });
  return {
    run: () => void trainer.step(samples()),
    close: async () => {
      trainer.dispose();
      await replicas?.close();
    },
  };
}

/** The mean seconds of `reps` runs after one warm-up, saying after each how long the rest should take. */
function time(job: string, run: () => void, warmUp = run): number {
  const w0 = performance.now();
  warmUp();
  console.error(`coevolve: ${job} warmed up in ${((performance.now() - w0) / 1000).toFixed(1)} s; ${reps} timed runs`);
  const t0 = performance.now();
  for (let r = 1; r <= reps; r++) {
    run();
    const each = (performance.now() - t0) / 1000 / r;
    console.error(
      `coevolve: ${job} run ${r}/${reps}, ${each.toFixed(1)} s each, about ${Math.round(each * (reps - r))} s left`,
    );
  }
  return (performance.now() - t0) / 1000 / reps;
}

/** Bytes of the backend's tensors and of a model's host matrices. */
const held = (models: HfCausalLM[]) =>
  tf.memory().numBytes +
  [...new Set(models)].reduce((n, m) => n + Object.values(m.host).reduce((k, h) => k + h.data.byteLength, 0), 0);

/**
 * "Separate models" two ways, measured: one frozen base with two LoRA adapters (rank 16, every
 * projection), as roles with adapters of their own run, against two full copies' weights, as
 * two fully fine-tuned models hold them (their gradients and Adam's two moments, three times
 * the weights again while training, aside).
 */
function memoryJob(): void {
  base?.dispose();
  base = undefined;
  const before = held([]);
  const shared = build(true);
  const adapters = [0, 1].map(
    (i) => new LoraAdapter(shared.config, { r: 16, alpha: 32, targetModules: 'all-linear' }, i),
  );
  const lora = held([shared]) - before;
  adapters.forEach((a) => a.dispose());
  shared.dispose();
  // the copies' weights counted where a frozen base keeps them (two 0.5B copies would not fit wasm's heap as variables): the bytes are the same
  const copies = [build(true), build(true)];
  const full = held(copies) - before;
  copies.forEach((m) => m.dispose());
  const mb = (n: number) => Math.round(n / 2 ** 20);
  console.log(
    JSON.stringify({
      impl: 'coevolve',
      shape,
      job: 'memory',
      base_and_2_adapters_mb: mb(lora),
      two_full_copies_mb: mb(full),
      ratio: +(lora / full).toFixed(3),
    }),
  );
}

const child = option('child', '');
// --profile: one more run of each job with its kernels' and products' time (hf-profile.ts)
const profile = args.includes('--profile');
if (child && profile) {
  const lib = loadNative();
  if (lib) countSgemm(lib);
}
// the backend starts only in a child: the parent holds no model, no heap and no native threads
const info = child
  ? await initBackend(option('backend', 'auto') as BackendChoice)
  : { chosen: 'none', native: undefined };
// training runs on `--workers` threads (default one per core, as a run's `workers: auto`), each
// product of a thread on one core; generation runs in this one thread, so its native products
// may use every core (`--threads 1` for one)
const workers = Number(option('workers', String(cpus().length)));
if (!(Number.isSafeInteger(workers) && workers > 0)) throw new Error(`bench:hf: --workers must be a positive integer`);
const training = ['lora', 'full'].includes(child);
const threads = Number(option('threads', String(training && workers > 1 ? 1 : cpus().length)));
if (child && info.native) loadNative()?.setThreads(threads);
if (child)
  console.error(`${describeBackend(info as Awaited<ReturnType<typeof initBackend>>)}; ${threads} native threads`);
const rng = new Rng(1);
let base: HfCausalLM | undefined;

/** Our tokens/s on `job` (a line printed), or undefined when it failed (said). */
async function ours(job: string): Promise<number | undefined> {
  let seconds: number;
  let tokens: number;
  try {
    // a frozen base for generation and LoRA, variables for full fine-tuning
    const frozen = job !== 'full';
    if (!base || base.frozen !== (frozen && info.native !== undefined)) {
      base?.dispose();
      base = build(frozen);
    }
    if (job === 'memory') {
      memoryJob();
      return undefined;
    }
    if (job === 'generate' || job === 'long' || job.startsWith('early')) {
      const model = base;
      const [B, P, N] = job === 'generate' ? [gB, gP, gN] : [lB, lP, lN];
      const V = model.config.vocabSize;
      // early: near-uniform random logits stop a row with chance 1/64 a token, so rows end at
      // many lengths; the same prompts and seed each run, so both early jobs sample the same tokens
      const early = job.startsWith('early')
        ? { stop: Array.from({ length: V / 64 }, (_, i) => 64 * i), dropFinished: job === 'early' }
        : {};
      const prompts = (n: number) =>
        early.stop
          ? Array.from({ length: B }, (_, b) => randomIds(new Rng(b + 1), P, V))
          : Array.from({ length: n }, () => randomIds(rng, P, V));
      let generated = 0;
      const run = (n = N) => {
        // a long answer says how far it got every 64 tokens (PyTorch's side does the same)
        const onStep = (done: number) => {
          if (n > 64 && done % 64 === 0 && done < n) console.error(`coevolve: ${done}/${n} tokens`);
        };
        generated = generate(model, prompts(B), { maxNewTokens: n, temperature: 1, seed: 1, onStep, ...early }).reduce(
          (k, g) => k + g.tokens.length,
          0,
        );
      };
      // long answers warm up on 8 tokens: a whole warm-up run would double the job's minutes
      seconds = time(job, run, job === 'generate' ? run : () => run(8));
      if (profile) await profileRun(job, run);
      tokens = early.stop ? generated : B * N;
    } else {
      const policy = new HfPolicy(
        base,
        job === 'lora' ? new LoraAdapter(base.config, { r: 16, alpha: 32, targetModules: 'all-linear' }, 2) : undefined,
      );
      const { run, close } = await trainJob(policy);
      try {
        seconds = time(job, run);
        if (profile) await profileRun(job, run);
      } finally {
        await close();
      }
      policy.dispose();
      tokens = tB * tT;
    }
  } catch (e) {
    // a job past the wasm heap aborts the backend: said (PyTorch's side still runs)
    console.log(
      JSON.stringify({
        impl: 'coevolve',
        shape,
        job,
        error: (e as Error).message.split('\n')[0],
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      }),
    );
    return undefined;
  }
  const rate = tokens / seconds;
  console.log(
    JSON.stringify({
      impl: 'coevolve',
      backend: info.chosen,
      native: info.native ?? 'off',
      threads,
      ...(['lora', 'full'].includes(job) ? { workers } : {}),
      shape,
      job,
      seconds: +seconds.toFixed(4),
      tokens_per_s: +rate.toFixed(1),
      tensors: tf.memory().numTensors,
      mb: Math.round(tf.memory().numBytes / 2 ** 20),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
  return rate;
}

// PyTorch's side: src/bench/torch_hf.py, the same jobs on the same model in plain PyTorch, with
// the interpreter of --python; it has the timed jobs only (no memory job, no Qwen2.5 shape)
const python = option('python', existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const torchScript = fileURLToPath(new URL('./torch_hf.py', import.meta.url));
const TORCH_JOBS = new Set(['generate', 'long', 'lora', 'full']);
const torchNeeds = `PyTorch and a threaded BLAS for ${python}: apt-get install -y python3-torch libopenblas0-pthread (Debian), or pip install torch; or name another interpreter with --python`;

/** Why PyTorch's side cannot run, or undefined when it can. */
function torchMissing(): string | undefined {
  if (option('torch', 'on') === 'off') return '--torch off';
  if (shape === 'qwen2.5-0.5b') return `${torchScript} has no ${shape} shape`;
  if (!existsSync(torchScript)) return `${torchScript} is missing`;
  const probe = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  if (probe.error) return `no interpreter ${python} (${probe.error.message}); ${torchNeeds}`;
  if (probe.status !== 0)
    return `${python} cannot import torch (${probe.stderr.trim().split('\n').pop()}); ${torchNeeds}`;
  return undefined;
}

/** PyTorch's tokens/s on `job` (its line printed), or undefined when it failed (said). */
function theirs(job: string): number | undefined {
  const run = spawnSync(
    python,
    [
      torchScript,
      ...['--threads', '1', '--shape', shape, '--jobs', job, '--reps', String(reps)],
      ...['--gen', `${gB},${gP},${gN}`, '--long', `${lB},${lP},${lN}`, '--train', `${tB},${tT}`],
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }, // its progress and errors show as they come
  );
  if (run.status !== 0) {
    console.error(`bench:hf: PyTorch's ${job} failed (its error is above)`);
    return undefined;
  }
  const line = run.stdout.trim().split('\n').pop()!;
  console.log(line);
  return (JSON.parse(line) as { tokens_per_s: number }).tokens_per_s;
}

/** Our tokens/s on `job` from a fresh process of this script (its line printed), or undefined when it failed or timed nothing. */
function oursApart(job: string): number | undefined {
  // the parent's options go on as given; --child names the one job, --jobs and --rounds are the parent's
  const passed: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (['--jobs', '--rounds', '--child', '--torch', '--python'].includes(args[i])) i++;
    else passed.push(args[i]);
  }
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), ...passed, '--child', job],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 },
  );
  const lines = (run.stdout ?? '')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  for (const l of lines) console.log(l);
  if (run.status !== 0) {
    console.error(`bench:hf: our ${job} ended with status ${run.status ?? run.signal}`);
    return undefined;
  }
  const last = lines.length ? (JSON.parse(lines[lines.length - 1]) as { tokens_per_s?: number }) : {};
  return last.tokens_per_s;
}

if (child) {
  await ours(child);
  base?.dispose();
} else {
  const missing = jobs.some((j) => TORCH_JOBS.has(j)) ? torchMissing() : 'no timed job';
  if (missing) console.error(`bench:hf: no PyTorch comparison in this run: ${missing}`);
  // ours and PyTorch's alternate job by job (and round by round with --rounds), each in a process
  // of its own, so that both sides of a ratio meet the same load on a shared machine; which side
  // goes first alternates from job to job
  const rounds = Number(option('rounds', '1'));
  const ratios: Record<string, number[]> = {};
  let turn = 0;
  for (let round = 0; round < rounds; round++) {
    for (const job of jobs) {
      const compare = !missing && TORCH_JOBS.has(job);
      const torchFirst = compare && turn++ % 2 === 1;
      const other0 = torchFirst ? theirs(job) : undefined;
      const mine = oursApart(job);
      if (!compare || mine === undefined) continue;
      const other = torchFirst ? other0 : theirs(job);
      if (other === undefined) continue;
      const ratio = mine / other;
      (ratios[job] ??= []).push(ratio);
      console.log(
        JSON.stringify({
          job,
          shape,
          round,
          vs: 'pytorch-1-thread',
          first: torchFirst ? 'pytorch' : 'coevolve',
          ratio: +ratio.toFixed(3),
        }),
      );
    }
  }
  if (rounds > 1)
    for (const [job, r] of Object.entries(ratios)) {
      const sorted = [...r].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)];
      console.log(
        JSON.stringify({ job, shape, vs: 'pytorch-1-thread', rounds: r.length, median_ratio: +median.toFixed(3) }),
      );
    }
}
