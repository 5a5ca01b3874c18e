/**
 * Can the judge's model learn the verdict at all? Supervised training on the right verdicts
 * (not the random ones of a judge base) of pairs made like the judge corpus's (a task, its right
 * answer and a near miss, in a random order), with held-out accuracy of the greedy verdict
 * every `--every` steps on tasks it never trained on. If this stays far under 90%, the
 * RL-trained judge's ceiling is the model's, not the reward's. A diagnostic, not a recipe:
 * it reads the labels that RL never sees.
 *
 * `--working right` puts the task's right answer before the verdict (a judge that writes its
 * own answer first, as JudgeLRM reasons before judging); the held-out check then lets the
 * model write its own working, greedily, before its verdict.
 *
 * `--operators -` trains on generated 2-digit tasks of those operators instead of `--tasks`
 * (a judge taught to compare on subtraction, checked on held-out additions: the comparison
 * transfers, no addition label is read), and `--out DIR` saves the model (a judge base).
 *
 *   npx tsx experiments/judge-capacity.ts --from checkpoints/base-add2 --tasks configs/data/add2-unseen.jsonl
 *     --heldout checkpoints/base-add2/heldout.jsonl [--steps 2000] [--mode pairwise|pointwise] [--working none|right]
 *     [--operators -] [--offsets -10,10] [--out DIR]
 */
import { initBackend } from '../src/backend/index.js';
import { JudgeRole } from '../roles/others.js';
import { saveModel } from '../src/models/store.js';
import { arithmetic } from '../src/tasks/arithmetic.js';
import { generate } from '../src/models/generate.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import type { Task } from '../src/core/types.js';
import { Rng } from '../src/util/rng.js';
import { arg, loadLanguageModel } from './script.js';

await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const mode = arg('mode', 'pairwise');
const working = arg('working', 'none');
if (working !== 'none' && working !== 'right') throw new Error(`--working: none or right, got '${working}'`);
const role = new JudgeRole();
// 'answer-first' shows the judged answer before the task (`46|12+34=`): the model then writes
// its own sum where it always has, and each digit it writes sits at a fixed distance from the
// shown digit it must match, whatever the task's length
// 'aligned' pads the task to 6 characters and every number (the shown answer, the judge's own
// working) to 3 on the left, so each digit sits at a fixed position: the comparison is then
// between fixed positions, which learned absolute position embeddings address directly
// 'own-first' writes the right sum after the task and then the shown answer (`12+34=46|47?`):
// the judge's own working comes before the answer it checks, each digit a fixed distance back;
// 'own-last' is the usual order with the right sum given after it (`12+34=47?46`), its control
const layout = arg('layout', 'task-first');
if (!['task-first', 'answer-first', 'aligned', 'own-first', 'own-last'].includes(layout))
  throw new Error(`--layout: task-first, answer-first, aligned, own-first or own-last, got '${layout}'`);
if ((layout === 'own-first' || layout === 'own-last') && (mode !== 'pointwise' || working !== 'none'))
  throw new Error(`--layout ${layout}: pointwise, and the own sum is in the prompt (--working none)`);
const pad = (answer: string) => (layout === 'aligned' ? answer.padStart(3, ' ') : answer);
const render = (task: Task, answers: string[]) => {
  if (layout === 'answer-first' && answers.length === 1) return `${answers[0]}|${task.prompt}`;
  if (layout === 'own-first') return `${task.prompt}${task.answer}|${answers[0]}?`;
  if (layout === 'own-last') return `${task.prompt}${answers[0]}?${task.answer}`;
  if (layout === 'aligned')
    return role.render({ task: { ...task, prompt: task.prompt.padStart(6, ' ') }, answers: answers.map(pad) });
  return role.render({ task, answers });
};
// as the judge corpus (arenas/judge/corpus.ts): a weak solver's misses; `--offsets -10,10` picks which (tens-only misses alone, say)
const offsets = arg('offsets', '-11,-10,-9,-2,-1,1,2,9,10,11').split(',').map(Number);
if (!offsets.length || offsets.some((o) => !Number.isInteger(o) || o === 0))
  throw new Error(`--offsets: non-zero integers separated by commas, got '${arg('offsets')}'`);

/** One judged showing of `task`: the prompt tokens and the right verdict. */
function showing(task: Task, rng: Rng): { prompt: number[]; verdict: string; working: string } {
  const right = task.answer!;
  const wrong = String(Math.max(0, Number(right) + offsets[rng.int(offsets.length)]));
  if (mode === 'pointwise') {
    const ok = rng.next() < 0.5;
    return {
      prompt: tokenizer.prompt(render(task, [ok ? right : wrong]), role.kind),
      verdict: ok ? 'y' : 'n',
      working: working === 'right' ? pad(right) : '',
    };
  }
  const first = rng.next() < 0.5;
  return {
    prompt: tokenizer.prompt(render(task, first ? [right, wrong] : [wrong, right]), role.kind),
    verdict: first ? 'A' : 'B',
    working: working === 'right' ? pad(right) : '',
  };
}

const operators = arg('operators', '');
const taskRng = new Rng(7);
const train = operators
  ? Array.from({ length: 4000 }, (_, i) =>
      arithmetic.generate(taskRng, arithmetic.validate({ digits: 2, operands: 2, operators }), i),
    )
  : readTasksJsonl(arg('tasks'), 'arithmetic', () => undefined);
const heldout = readTasksJsonl(arg('heldout'), 'arithmetic', () => undefined);
const rng = new Rng(Number(arg('seed', '1')));
const examples = Array.from({ length: 16384 }, () => {
  const s = showing(train[rng.int(train.length)], rng);
  return { prompt: s.prompt, completion: [...tokenizer.encode(s.working + s.verdict), tokenizer.eos] };
});
const evalRng = new Rng(99);
const probes = heldout.flatMap((t) => [showing(t, evalRng), showing(t, evalRng)]);

function accuracy(): number {
  const gens = generate(
    model,
    probes.map((p) => p.prompt),
    { maxNewTokens: working === 'right' ? 6 : 2, temperature: 0, seed: 1, eos: tokenizer.eos },
  );
  return (
    gens.filter(
      (g, i) =>
        tokenizer
          .decode(g.tokens.filter((x) => x !== tokenizer.eos))
          .trim()
          .slice(-1) === probes[i].verdict,
    ).length / probes.length
  );
}

const steps = Number(arg('steps', '2000')),
  every = Number(arg('every', '200'));
const trainer = new SupervisedTrainer(model, examples, { batchSize: 64, lr: Number(arg('lr', '3e-4')), seed: 1 });
console.log(
  JSON.stringify({
    step: 0,
    heldout_accuracy: accuracy(),
    probes: probes.length,
    mode,
    working,
    layout,
    from: arg('from'),
  }),
);
for (let step = 1; step <= steps; step++) {
  const loss = trainer.step();
  if (step % every === 0)
    console.log(JSON.stringify({ step, loss: +loss.toFixed(4), heldout_accuracy: +accuracy().toFixed(3) }));
}
trainer.dispose();
const out = arg('out', '');
if (out) {
  await saveModel(out, model, tokenizer, {
    made: 'experiments/judge-capacity.ts',
    from: arg('from'),
    steps,
    mode,
    working,
    operators: operators || 'from --tasks',
    labels: 'right verdicts',
  });
  console.log(`wrote ${out}`);
}
