import { initBackend, describeBackend, type BackendChoice } from '../backend/index.js';
import type { Accelerate } from '../backend/accelerate.js';
import { evaluateSolver, type EvalResult } from '../core/evaluate.js';
import { openModel } from '../models/open.js';
import { roleTokenizer } from '../models/hf/text.js';
import type { HfPolicy } from '../models/hf/policy.js';
import type { TinyLM } from '../models/tinylm.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import { stopStringsProblem } from '../models/stop-strings.js';
import { startReplicas } from '../parallel/replicas.js';
import { resolveTaskFamily } from '../registry.js';
import { createProgress, type ProgressStream } from '../progress/index.js';

export interface EvalOptions {
  checkpoint: string;
  adapter?: string;
  data: string;
  family: string;
  plugin?: string[];
  stream?: ProgressStream;
  samples: number;
  temperature: number;
  seed?: number;
  maxNewTokens: number;
  /** stop strings (see GenerateOptions.stopStrings) */
  stop?: string[];
  backend: string;
  accelerate?: string;
  workers?: string;
}

/** `coevolve eval`: loads a model (see openEvaluated) and scores it on labeled tasks from a JSONL file. */
export async function evalCommand(o: EvalOptions): Promise<EvalResult & { checkpoint: string; data: string }> {
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 1)
    throw new Error(`eval: --max-new-tokens must be a positive integer, got ${o.maxNewTokens}`);
  const problem = stopStringsProblem(o.stop ?? []);
  if (problem) throw new Error(`eval: --stop: ${problem}`);
  const family = await resolveTaskFamily(o.family, o.plugin ?? [], '--family');
  const tasks = readTasksJsonl(o.data, o.family);
  if (tasks.length === 0) throw new Error(`eval: ${o.data} holds no tasks`);
  const unlabeled = tasks.findIndex((t) => t.answer === undefined);
  if (unlabeled >= 0) throw new Error(`eval: ${o.data} line ${unlabeled + 1} has no answer; eval needs labels`);
  const setting = o.workers ?? 'auto';
  if (setting !== 'auto' && !/^[1-9][0-9]*$/.test(setting))
    throw new Error(`eval: --workers must be auto or a positive integer, got '${setting}'`);
  const accelerate = (o.accelerate ?? 'auto') as Accelerate;
  const info = await initBackend(o.backend as BackendChoice, accelerate);
  console.error(describeBackend(info));
  const loaded = await openEvaluated(o.checkpoint, o.adapter);
  // a replica of the model in each further thread generates a share of every batch (src/parallel)
  const replicas = await startReplicas(
    setting === 'auto' ? 'auto' : Number(setting),
    { backend: info.chosen, accelerate },
    { eval: loaded.model },
  );
  try {
    // greedy answers, then `samples` per task: one tick per episode, a bar on a terminal
    const progress = createProgress(tasks.length * (1 + o.samples), {
      stream: o.stream,
      label: 'eval',
      unit: 'episode',
      plainEvery: 0.1,
      redrawMs: 100,
    });
    let done = 0;
    const result = await evaluateSolver(loaded.model, loaded.tokenizer, family, tasks, {
      samples: o.samples,
      maxNewTokens: o.maxNewTokens,
      stopStrings: o.stop ?? [],
      temperature: o.temperature,
      seed: o.seed ?? 0,
      replicas,
      id: 'eval',
      onEpisode: () => progress.tick(++done),
    });
    progress.done();
    return { checkpoint: o.checkpoint, data: o.data, ...result };
  } finally {
    await replicas?.close();
    loaded.model.dispose();
  }
}

/**
 * The model `path` names: a TinyLM checkpoint, or a Hugging Face directory, a run checkpoint
 * of one or a merged export (with `adapter`, a PEFT adapter on it). A Hugging Face model's
 * solver speaks through its chat template when it has one, as in a run.
 */
async function openEvaluated(
  path: string,
  adapter?: string,
): Promise<
  { kind: 'tinylm'; model: TinyLM; tokenizer: Tokenizer } | { kind: 'hf'; model: HfPolicy; tokenizer: Tokenizer }
> {
  const opened = await openModel(path, adapter);
  if (opened.kind === 'tinylm') return { kind: 'tinylm', model: opened.model, tokenizer: opened.tokenizer };
  if (!opened.tokenizer)
    throw new Error(`eval: ${path} has no tokenizer.json: tasks are text, so eval needs the model's tokenizer`);
  return { kind: 'hf', model: opened.policy, tokenizer: roleTokenizer(opened.tokenizer, path) };
}
