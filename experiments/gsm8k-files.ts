/**
 * Writes the GSM8K worked example's task files (docs/data.md): word problems from the
 * `word-problems` family in GSM8K's columns (`question`, and `answer`: a worked solution with
 * calculator annotations ending `#### N`), as JSONL and as Parquet, a training split and a
 * held-out split. The held-out questions are in neither the training split nor the base's
 * pretraining corpus (`--pretrain`), so held-out accuracy measures problems no stage saw.
 *
 *   npx tsx experiments/gsm8k-files.ts [--train 500] [--test 200] [--seed 7] [--out configs/data]
 *     [--pretrain configs/pretrain/qwen3-chat-gsm.yaml]
 *
 * Parquet is written by hyparquet-writer (a dev dependency, so this is a script, not a command).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteFile } from 'hyparquet-writer';
import { loadPretrainConfig } from '../src/pretrain/schema.js';
import { pretrainCorpus } from '../src/pretrain/corpus.js';
import { gsm8kSplit, wordProblems } from '../src/tasks/word-problems.js';
import { arg } from './script.js';

const pretrain = loadPretrainConfig(arg('pretrain', 'configs/pretrain/qwen3-chat-gsm.yaml'));
if (pretrain.task.family !== wordProblems.name)
  throw new Error(`--pretrain: the base learns '${pretrain.task.family}', not '${wordProblems.name}'`);
const difficulty = wordProblems.validate(pretrain.task.difficulty, 'task.difficulty');
const corpus = pretrainCorpus(pretrain);
const split = gsm8kSplit(
  Number(arg('seed', '7')),
  difficulty,
  { train: Number(arg('train', '500')), test: Number(arg('test', '200')) },
  new Set(corpus.train.map((t) => t.prompt)),
);
const out = arg('out', 'configs/data');
for (const name of ['train', 'test'] as const) {
  const rows = split[name];
  const base = join(out, `gsm8k-${name}`);
  writeFileSync(`${base}.jsonl`, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await parquetWriteFile({
    filename: `${base}.parquet`,
    columnData: [
      { name: 'question', data: rows.map((r) => r.question), type: 'STRING' },
      { name: 'answer', data: rows.map((r) => r.answer), type: 'STRING' },
    ],
  });
  console.log(`${base}.jsonl, ${base}.parquet: ${rows.length} rows`);
}
