/**
 * A peer base: one model that answers and judges, for peer judgement (configs/runs/judges/peer-add2.yaml
 * with `--set models.aN.checkpoint=...`). The RL-trained judge computes sums well as the judge
 * (its own working) but no longer answers in the solver role; this restores the solver role by
 * supervised training on generated sums (a pretraining corpus: prompts drawn by the family's
 * generator, none from `--heldout`), mixed half and half with the judge's own greedy verdicts
 * on near misses (self-distillation: no verdict label is read, so what it judges stays its own).
 * Prints the solver's held-out greedy accuracy and the judge's held-out verdict accuracy (the
 * labels are read there only, to measure) before and after.
 *
 * A script, not a pretrain config: it starts from an RL-trained judge (a run's result that
 * docs/judges.md says how to make, not a base), and no shipped config names what it makes;
 * docs/judges.md passes it to peer-add2.yaml with `--set`.
 *
 *   npx tsx experiments/peer-base.ts --from checkpoints/judge-add2-deep-rl --heldout checkpoints/base-add2-deep/heldout.jsonl --out checkpoints/peer-add2-deep [--steps 400]
 */
import { initBackend } from '../src/backend/index.js';
import { JudgeRole } from '../roles/others.js';
import { saveModel } from '../src/models/store.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { arithmetic } from '../src/tasks/arithmetic.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import type { Task } from '../src/core/types.js';
import { Rng } from '../src/util/rng.js';
import { arg, greedyTexts, loadLanguageModel } from './script.js';

await initBackend('auto');
const from = arg('from');
const { model, tokenizer } = await loadLanguageModel(from);
const role = new JudgeRole();
const heldout = readTasksJsonl(arg('heldout'), 'arithmetic', () => undefined);
const unseen = new Set(heldout.map((t) => t.prompt));
const rng = new Rng(Number(arg('seed', '1')));
const difficulty = arithmetic.validate({ digits: 2, operands: 2, operators: '+' });
const corpus: Task[] = [];
for (let i = 0; corpus.length < 4000; i++) {
  const t = arithmetic.generate(rng, difficulty, i);
  if (!unseen.has(t.prompt)) corpus.push(t);
}
const offsets = [-11, -10, -9, -2, -1, 1, 2, 9, 10, 11]; // near misses, as the judge corpus (arenas/judge/corpus.ts)
const shown = (t: Task, r: Rng) =>
  r.next() < 0.5 ? t.answer! : String(Math.max(0, Number(t.answer) + offsets[r.int(offsets.length)]));
const greedy = (prompts: number[][], maxNewTokens: number) => greedyTexts(model, tokenizer, prompts, maxNewTokens);

/** Held-out greedy accuracy of the solver role and of the judge's verdicts on a right answer or a near miss. */
function measure(): { solver: number; judge: number } {
  const answers = greedy(
    heldout.map((t) => tokenizer.prompt(t.prompt, 'solver')),
    5,
  );
  const r = new Rng(99);
  const showings = heldout.map((t) => ({ t, answer: shown(t, r) }));
  const verdicts = greedy(
    showings.map((s) => tokenizer.prompt(role.render({ task: s.t, answers: [s.answer] }), role.kind)),
    6,
  );
  return {
    solver: answers.filter((a, i) => arithmetic.verify(heldout[i], a)).length / heldout.length,
    judge:
      verdicts.filter((v, i) => v.slice(-1) === (showings[i].answer === showings[i].t.answer ? 'y' : 'n')).length /
      showings.length,
  };
}

// the judge's own greedy completions on corpus showings: what it already says, kept while the solver role is taught
const judgeRng = new Rng(7);
const judgeShowings = corpus.map((t) =>
  tokenizer.prompt(role.render({ task: t, answers: [shown(t, judgeRng)] }), role.kind),
);
const judgeSays = greedy(judgeShowings, 6);
const examples = corpus.flatMap((t, i) => [
  { prompt: tokenizer.prompt(t.prompt, 'solver'), completion: [...tokenizer.encode(t.answer!), tokenizer.eos] },
  { prompt: judgeShowings[i], completion: [...tokenizer.encode(judgeSays[i]), tokenizer.eos] },
]);
console.log(JSON.stringify({ step: 0, ...measure(), from }));
const steps = Number(arg('steps', '400')),
  every = Number(arg('every', '100'));
const trainer = new SupervisedTrainer(model, examples, { batchSize: 64, lr: Number(arg('lr', '3e-4')), seed: 1 });
for (let step = 1; step <= steps; step++) {
  const loss = trainer.step();
  if (step % every === 0) console.log(JSON.stringify({ step, loss: +loss.toFixed(4), ...measure() }));
}
trainer.dispose();
const out = arg('out');
await saveModel(out, model, tokenizer, {
  made: 'experiments/peer-base.ts',
  from,
  steps,
  labels: 'solver answers of generated sums; the judge role distils its own greedy verdicts',
});
console.log(`wrote ${out}`);
