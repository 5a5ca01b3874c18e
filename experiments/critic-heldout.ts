/**
 * A ProcessBench-like held-out set for step critics: a solver's own wrong working on tasks
 * it never trained on. For each task the solver (sampled at `--temperature`, 0.6 as the TTRL
 * runs sample it) writes up to `--tries` workings; the first that ends (end of sequence) and
 * is working of the right length with a wrong step (the
 * rule checker's call, src/tasks/scratchpad.ts) is kept as the line's `working`. Tasks where
 * every try was right or malformed are left out. Read by the `critic` evaluator with
 * `corrupter: given`.
 *
 *   npx tsx experiments/critic-heldout.ts --from checkpoints/base-sum3-working --tasks checkpoints/base-sum3-working/heldout.jsonl --out configs/data/sum3-solver-errors.jsonl
 */
import { writeFileSync } from 'node:fs';
import { initBackend } from '../src/backend/index.js';
import { generate } from '../src/models/generate.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { firstWrongStep, sumOperands } from '../src/tasks/scratchpad.js';
import { arg, loadLanguageModel } from './script.js';

await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const tasks = readTasksJsonl(arg('tasks'), 'arithmetic', () => undefined);
const tries = Number(arg('tries', '16'));
const prompts = tasks.flatMap((t) => Array.from({ length: tries }, () => tokenizer.prompt(t.prompt, 'solver')));
const gens = generate(model, prompts, {
  maxNewTokens: 24,
  temperature: Number(arg('temperature', '0.6')),
  seed: Number(arg('seed', '1')),
  eos: tokenizer.eos,
});
const lines: string[] = [];
const firsts: number[] = [];
tasks.forEach((t, i) => {
  const operands = sumOperands(t.prompt);
  if (!operands) throw new Error(`${t.id}: not a sum: ${t.prompt}`);
  for (const g of gens.slice(i * tries, (i + 1) * tries)) {
    if (g.tokens[g.tokens.length - 1] !== tokenizer.eos) continue;
    const working = tokenizer.decode(g.tokens.slice(0, -1)).trim();
    const check = firstWrongStep(operands, working);
    if ('first' in check && check.first > 0) {
      lines.push(JSON.stringify({ id: t.id, prompt: t.prompt, answer: t.answer, working }));
      firsts.push(check.first);
      return;
    }
  }
});
writeFileSync(arg('out'), lines.join('\n') + '\n');
const share = (k: number) => +(firsts.filter((f) => f === k).length / firsts.length).toFixed(3);
console.log(
  JSON.stringify({
    out: arg('out'),
    tasks: tasks.length,
    kept: lines.length,
    first_wrong_step: { 1: share(1), 2: share(2) },
  }),
);
