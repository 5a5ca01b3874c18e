/**
 * A judge base: a solver checkpoint taught by supervised training to answer the judge role's
 * prompt (a task and two answers, one right and one wrong, in a random order; or one answer,
 * right or wrong, with `--mode pointwise`) with a verdict and end of sequence, the verdict
 * drawn at random, not the right one. It writes
 * verdicts, which RL from the solver base cannot discover (it never writes `A` or `B` in the
 * judge role), and it is at chance: what it learns about which answer is right comes from
 * the verdict rewards alone (JudgeLRM also starts from a model that follows the format).
 *
 * With `--labels right` the verdicts are the right ones instead: a judge learned from labels,
 * as a reward model is (docs/judges.md measures one in the solve-first format);
 * `--slips S` makes that share of the wrong answers a right one with one digit changed (the
 * hundreds digit, which no offset reaches, and every digit alike).
 *
 *   npx tsx src/experiments/judge-base.ts --from checkpoints/base-add2 --tasks configs/data/add2-unseen.jsonl --out checkpoints/base-add2-judge [--steps 150] [--mode pairwise|pointwise] [--working none|self|solve-first] [--labels coin|right] [--slips 0] [--own greedy|right] [--examples 4096]
 */
import { initBackend } from '../backend/index.js';
import { digitSlip } from '../../arenas/judge.js';
import { JudgeRole } from '../../roles/others.js';
import { saveModel } from '../models/store.js';
import { trainSupervised } from '../models/supervised.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import { Rng } from '../util/rng.js';
import { arg, greedyTexts, loadLanguageModel } from './script.js';

const seed = Number(arg('seed', '1'));
await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const tasks = readTasksJsonl(arg('tasks'), 'arithmetic', () => undefined);
const role = new JudgeRole();
const rng = new Rng(seed);
// wrong answers as a weak solver writes them: off by a little, or in one digit
const offsets = [-11, -10, -9, -2, -1, 1, 2, 9, 10, 11];
// --mode pairwise (two answers, a letter) or pointwise (one answer, right or wrong, 'y' or 'n')
const mode = arg('mode', 'pairwise');
if (mode !== 'pairwise' && mode !== 'pointwise') throw new Error(`--mode: pairwise or pointwise, got '${mode}'`);
// --working self: the verdict follows the model's own greedy answer to the task (what it would
// write as the solver: its working, so the judge can compare it with the answers; no new knowledge)
// --working solve-first (pointwise): two turns, as the judge arena's solveFirst asks: the task
// alone, answered with its own greedy answer, then `task own|shown?` answered with a verdict
const working = arg('working', 'none');
if (!['none', 'self', 'solve-first'].includes(working)) throw new Error(`--working: none, self or solve-first, got '${working}'`);
if (working === 'solve-first' && mode !== 'pointwise') throw new Error('--working solve-first: needs --mode pointwise');
const labels = arg('labels', 'coin');
if (labels !== 'coin' && labels !== 'right') throw new Error(`--labels: coin or right, got '${labels}'`);
const slips = Number(arg('slips', '0'));
if (!(slips >= 0 && slips <= 1)) throw new Error(`--slips: a share from 0 to 1, got '${arg('slips', '0')}'`);
// --own right (with --working solve-first): the judge's own answer is the task's answer, not its greedy one,
// so no label contradicts the comparison of the two answers
const ownFrom = arg('own', 'greedy');
if (ownFrom !== 'greedy' && ownFrom !== 'right') throw new Error(`--own: greedy or right, got '${ownFrom}'`);
const own = new Map<string, string>();
if (working !== 'none' && ownFrom === 'right') tasks.forEach((t) => own.set(t.id, t.answer!));
else if (working !== 'none') {
  const answers = greedyTexts(model, tokenizer, tasks.map((t) => tokenizer.prompt(t.prompt, 'solver')), 4, seed);
  tasks.forEach((t, i) => own.set(t.id, answers[i]));
}
const examples = Array.from({ length: Number(arg('examples', '4096')) }, () => {
  const task = tasks[rng.int(tasks.length)];
  const right = task.answer!;
  const wrong = slips > 0 && rng.next() < slips ? digitSlip(right, rng)! : String(Math.max(0, Number(right) + offsets[rng.int(offsets.length)]));
  const answers = mode === 'pointwise' ? [rng.next() < 0.5 ? right : wrong] : rng.next() < 0.5 ? [right, wrong] : [wrong, right];
  const letters = mode === 'pointwise' ? ['y', 'n'] : ['A', 'B'];
  const truth = mode === 'pointwise' ? (answers[0] === right ? 'y' : 'n') : answers[0] === right ? 'A' : 'B';
  const verdict = labels === 'right' ? truth : letters[rng.int(2)];
  if (working === 'solve-first') {
    const mine = own.get(task.id)!;
    return [
      { prompt: tokenizer.prompt(role.render({ task, answers: [] }), role.kind), completion: [...tokenizer.encode(mine), tokenizer.eos] },
      { prompt: tokenizer.prompt(role.render({ task, working: mine, answers }), role.kind), completion: [...tokenizer.encode(verdict), tokenizer.eos] },
    ];
  }
  const prompt = tokenizer.prompt(role.render({ task, answers }), role.kind);
  return [{ prompt, completion: [...tokenizer.encode((own.get(task.id) ?? '') + verdict), tokenizer.eos] }];
}).flat();
const steps = Number(arg('steps', '150'));
trainSupervised(model, examples, {
  steps, batchSize: 64, lr: Number(arg('lr', '3e-4')), seed,
  onStep: (step, loss) => {
    if (step % 25 === 24) console.log(JSON.stringify({ step: step + 1, loss: +loss.toFixed(4) }));
  },
});
const out = arg('out');
await saveModel(out, model, tokenizer, { made: 'src/experiments/judge-base.ts', from: arg('from'), steps, mode, working, own: ownFrom, labels: labels === 'right' ? `right verdicts${slips ? `, ${slips} of wrong answers one-digit slips` : ''}` : 'random verdicts (format only)' });
console.log(`wrote ${out}`);
