/**
 * A judge base from the command line (src/engine/judge-corpus.ts says what it teaches);
 * `coevolve pretrain` with a `judge:` section makes the same from a config
 * (configs/judges/pretrain-add2-judge.yaml).
 *
 *   npx tsx experiments/judge-base.ts --from checkpoints/base-add2 --tasks configs/data/add2-unseen.jsonl
 *     --out checkpoints/base-add2-judge [--steps 150] [--mode pairwise|pointwise] [--working none|self|solve-first]
 *     [--labels coin|right] [--slips 0] [--own greedy|right] [--examples 4096]
 */
import { initBackend } from '../src/backend/index.js';
import { JudgeCorpusSchema, judgeExamples } from '../src/engine/judge-corpus.js';
import { saveModel } from '../src/models/store.js';
import { trainSupervised } from '../src/models/supervised.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { arg, loadLanguageModel } from './script.js';

const seed = Number(arg('seed', '1'));
await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const tasks = readTasksJsonl(arg('tasks'), 'arithmetic', () => undefined);
const o = JudgeCorpusSchema.parse({
  tasks: arg('tasks'),
  mode: arg('mode', 'pairwise'),
  working: arg('working', 'none'),
  own: arg('own', 'greedy'),
  labels: arg('labels', 'coin'),
  slips: Number(arg('slips', '0')),
  examples: Number(arg('examples', '4096')),
});
const examples = judgeExamples(model, tokenizer, tasks, o, seed);
const steps = Number(arg('steps', '150'));
trainSupervised(model, examples, {
  steps,
  batchSize: 64,
  lr: Number(arg('lr', '3e-4')),
  seed,
  onStep: (step, loss) => {
    if (step % 25 === 24) console.log(JSON.stringify({ step: step + 1, loss: +loss.toFixed(4) }));
  },
});
const out = arg('out');
await saveModel(out, model, tokenizer, {
  made: 'experiments/judge-base.ts',
  from: arg('from'),
  steps,
  mode: o.mode,
  working: o.working,
  own: o.own,
  labels:
    o.labels === 'right'
      ? `right verdicts${o.slips ? `, ${o.slips} of wrong answers one-digit slips` : ''}`
      : 'random verdicts (format only)',
});
console.log(`wrote ${out}`);
