/**
 * Where a solve-first judge errs, by the kind of answer it is shown: the solver's own sampled
 * answers to held-out tasks (as the `verdicts` evaluator shows them) and one-digit slips of the
 * right answer at each digit (to any other digit, and to an adjacent one). The judge writes its
 * own answer greedily, then its verdict on `task own|shown?` greedily. Prints the wrong share
 * per kind: `right`, `units`/`tens`/`hundreds` (one digit off; 2 or 3 the length of the sum),
 * `length` (a different number of digits), `multi` (several digits off), each split by whether
 * the judge's own answer was right, equal to the one shown, or wrong otherwise.
 *
 *   npx tsx experiments/judge-probe.ts --judge CHECKPOINT --solver checkpoints/base-add2-deep --heldout checkpoints/base-add2/heldout.jsonl [--samples 8] [--seed 1]
 */
import { initBackend } from '../src/backend/index.js';
import { digitSlip } from '../arenas/judge/index.js';
import { JudgeRole } from '../roles/others.js';
import { generate } from '../src/models/generate.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { Rng } from '../src/util/rng.js';
import { arg, greedyTexts, loadLanguageModel } from './script.js';

await initBackend('auto');
const judge = await loadLanguageModel(arg('judge'));
const solver = await loadLanguageModel(arg('solver'));
const tasks = readTasksJsonl(arg('heldout'), 'arithmetic', () => undefined);
const samples = Number(arg('samples', '8'));
const seed = Number(arg('seed', '1'));
const { tokenizer } = judge;
const role = new JudgeRole();

/** The kind of `shown` against the right answer `truth`. */
function kind(shown: string, truth: string): string {
  if (shown === truth) return 'right';
  if (shown.length !== truth.length) return 'length';
  const off = [...truth].flatMap((d, i) => (shown[i] !== d ? [truth.length - 1 - i] : []));
  return off.length > 1 ? 'multi' : `${['units', 'tens', 'hundreds'][off[0]]}${truth.length}`;
}

// the solver's own answers, sampled as the arena samples them
const prompts = tasks.flatMap((t) =>
  Array.from({ length: samples }, () => solver.tokenizer.prompt(t.prompt, 'solver')),
);
const sampled = generate(solver.model, prompts, {
  maxNewTokens: 6,
  temperature: 1,
  seed,
  eos: solver.tokenizer.eos,
}).map((g) => solver.tokenizer.decode(g.tokens.filter((x) => x !== solver.tokenizer.eos)).trim());
const rng = new Rng(seed);
const shown: { task: (typeof tasks)[number]; answer: string; from: string }[] = [];
tasks.forEach((task, i) => {
  for (const a of new Set(sampled.slice(i * samples, (i + 1) * samples)))
    shown.push({ task, answer: a, from: 'solver' });
  for (const change of ['any', 'adjacent'] as const) {
    for (let d = 0; d < task.answer!.length; d++) {
      // a slip at digit d, drawn until it lands there (digitSlip picks the digit at random)
      for (let tries = 0; tries < 50; tries++) {
        const s = digitSlip(task.answer!, rng, change)!;
        if (s[d] !== task.answer![d]) {
          shown.push({ task, answer: s, from: `planted-${change}` });
          break;
        }
      }
    }
  }
});
const own = greedyTexts(
  judge.model,
  tokenizer,
  tasks.map((t) => tokenizer.prompt(role.render({ task: t, answers: [] }), role.kind)),
  6,
  seed,
);
const ownOf = new Map(tasks.map((t, i) => [t.id, own[i].trim()]));
const verdicts = greedyTexts(
  judge.model,
  tokenizer,
  shown.map((s) =>
    tokenizer.prompt(role.render({ task: s.task, working: ownOf.get(s.task.id)!, answers: [s.answer] }), role.kind),
  ),
  2,
  seed,
);
const table = new Map<string, { n: number; wrong: number }>();
shown.forEach((s, i) => {
  const mine = ownOf.get(s.task.id)!;
  const k = `${s.from} ${kind(s.answer, s.task.answer!)} ${mine === s.task.answer ? 'own-right' : mine === s.answer ? 'own=shown' : 'own-wrong'}`;
  const want = s.answer === s.task.answer ? 'y' : 'n';
  const row = table.get(k) ?? { n: 0, wrong: 0 };
  row.n++;
  if (verdicts[i].trim().slice(-1) !== want) row.wrong++;
  table.set(k, row);
});
console.log(
  JSON.stringify({
    judge: arg('judge'),
    own_right: tasks.filter((t) => ownOf.get(t.id) === t.answer).length / tasks.length,
  }),
);
for (const [k, r] of [...table].sort()) console.log(`${k.padEnd(32)} wrong ${(r.wrong / r.n).toFixed(2)} of ${r.n}`);
