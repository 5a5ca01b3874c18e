import type { ExperimentConfig } from '../config/schema.js';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { z } from 'zod';
import { createProgress, type ProgressStream } from '../progress/index.js';
import { RunStore } from '../store/run.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { HfTokenizer } from '../models/hf/tokenizer.js';
import type { Turn } from '../core/types.js';

/**
 * One sample of an exported run: a turn, as a row. Column names follow the Python trainers:
 * `prompt` and `completion` are TRL's prompt-completion format (`datasets.load_dataset('json')`
 * reads the file as is); `data_source` and `reward_model.ground_truth` are verl's RL dataset
 * fields (the task family and the task's answer); `reward` and `advantage` are what the turn
 * earned and was trained with.
 */
export const TrajectorySchema = z.strictObject({
  /** the prompt text the role rendered (special and role tokens dropped; `role` names it) */
  prompt: z.string(),
  /** the completion text (EOS dropped) */
  completion: z.string(),
  role: z.string(),
  /** the model that produced it */
  model: z.string(),
  /** the comparison group of its episode (the G episodes played on one task) */
  group: z.string(),
  episode: z.string(),
  /** the turn's index in its episode */
  turn: z.number().int().nonnegative(),
  iteration: z.number().int().nonnegative(),
  /** the judges' reward, combined by weight; null when every judge abstained */
  reward: z.number().nullable(),
  /** the advantage it was trained with (mean over its tokens); null when its role did not train */
  advantage: z.number().nullable(),
  /** whether the role could read the completion */
  valid: z.boolean(),
  /** the sum of the completion's token log-probs when sampled (the behaviour policy) */
  logprob: z.number(),
  /** verl: the task family */
  data_source: z.string(),
  /** verl: the rule reward's ground truth (the task's answer, when it has one) */
  reward_model: z.strictObject({ style: z.literal('rule'), ground_truth: z.string().nullable() }),
  task_id: z.string(),
});
export type Trajectory = z.infer<typeof TrajectorySchema>;

const MessageSchema = z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
/** A row of `export --chat`: the same columns, `prompt` and `completion` as conversations. */
export const ChatTrajectorySchema = TrajectorySchema.extend({
  prompt: z.array(MessageSchema).min(1),
  completion: z.array(MessageSchema).length(1),
});
export type ChatTrajectory = z.infer<typeof ChatTrajectorySchema>;

const chatPrompt = (t: Turn, user: string): Message[] => [
  ...(t.chat ? [{ role: 'system' as const, content: t.chat.system }] : []),
  { role: 'user', content: user },
];

/** What reads a turn's ids back as text. */
export interface IdDecoder {
  decode(ids: readonly number[]): string;
}

/**
 * The tokenizer of each of the run's models: a Hugging Face model's from its directory; a
 * TinyLM's from its last checkpoint, else the one it started from, else the default.
 */
export function runTokenizers(store: RunStore<unknown>): (model: string) => IdDecoder {
  const cache = new Map<string, IdDecoder>();
  // a pretrain run plays no episodes; only an experiment names models
  const models = store.kind === 'experiment' ? (store.config as ExperimentConfig).models : {};
  return (model) => {
    const spec = models[model];
    if (!cache.has(model) && spec?.kind === 'hf' && spec.path && existsSync(join(spec.path, 'tokenizer.json'))) {
      const tk = HfTokenizer.fromDirectory(spec.path);
      cache.set(model, { decode: (ids) => tk.decode(ids, { skipSpecialTokens: true }) });
    }
    if (!cache.has(model)) {
      const last = store.lastCheckpointDir();
      const start = models[model]?.checkpoint;
      const file = [last && join(last, model, 'tokenizer.json'), start && join(start, 'tokenizer.json')].find(
        (f): f is string => !!f && existsSync(f),
      );
      cache.set(model, file ? CharTokenizer.fromSpec(JSON.parse(readFileSync(file, 'utf8'))) : new CharTokenizer());
    }
    return cache.get(model)!;
  };
}

/** The text a turn's role was shown: the user message of a chat turn, else its prompt ids decoded (special and role tokens dropped). */
export const promptText = (t: Turn, tokenizer: IdDecoder): string => t.chat?.user ?? tokenizer.decode(t.prompt);

/** A chat message, as TRL's conversational datasets hold them. */
export interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * `coevolve export RUN --out FILE`: every turn of every stored episode as one JSONL row
 * ({@link TrajectorySchema}), read only from the run. Returns the rows written. With `chat`,
 * `prompt` and `completion` are conversations instead (TRL's conversational prompt-completion
 * format): the turn's system and user messages (a turn of a model without a chat template has
 * only the user's), and the assistant's answer.
 */
export async function exportRun(
  dir: string,
  out: string,
  o: { stream?: ProgressStream; chat?: boolean } = {},
): Promise<number> {
  const store = await RunStore.open(dir);
  const tokenizer = runTokenizers(store);
  const file = createWriteStream(out, { flags: 'wx' });
  const failed = new Promise<never>((_, reject) => file.once('error', reject));
  failed.catch(() => {}); // raced below; never left unhandled
  const progress = createProgress(Math.max(1, store.record.iterations), {
    stream: o.stream,
    label: 'export',
    unit: 'iteration',
  });
  let rows = 0;
  let shown = 0;
  for (const e of store.episodes()) {
    for (const t of e.turns) {
      const task = t.task ?? e.task;
      const text = promptText(t, tokenizer(t.model));
      const row: Trajectory | ChatTrajectory = {
        ...(o.chat
          ? { prompt: chatPrompt(t, text), completion: [{ role: 'assistant' as const, content: t.text }] }
          : { prompt: text, completion: t.text }),
        role: t.role,
        model: t.model,
        group: e.group,
        episode: e.id,
        turn: t.index,
        iteration: e.iteration,
        reward: t.reward ?? null,
        advantage: t.advantage ?? null,
        valid: t.action.valid,
        logprob: t.logProbs.reduce((a, b) => a + b, 0),
        data_source: task.family,
        reward_model: { style: 'rule', ground_truth: task.answer ?? null },
        task_id: task.id,
      };
      if (!file.write(JSON.stringify(row) + '\n')) await Promise.race([once(file, 'drain'), failed]);
      rows++;
    }
    if (e.iteration > shown) progress.tick((shown = e.iteration));
  }
  progress.done();
  file.end();
  await Promise.race([once(file, 'finish'), failed]);
  return rows;
}

/** Reads an exported file back, each line checked against the schema (`chat`: the conversational one); an error names the line. */
export function readTrajectories(path: string): Trajectory[];
export function readTrajectories(path: string, chat: true): ChatTrajectory[];
export function readTrajectories(path: string, chat = false): (Trajectory | ChatTrajectory)[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line, i) => {
      if (line.trim() === '') return [];
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        throw new Error(`${path}:${i + 1}: not JSON`);
      }
      const r = (chat ? ChatTrajectorySchema : TrajectorySchema).safeParse(raw);
      if (!r.success)
        throw new Error(
          `${path}:${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || 'row'}: ${x.message}`).join('; ')}`,
        );
      return [r.data];
    });
}
