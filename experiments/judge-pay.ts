// How a judge in the loop pays its solver (issue 49, target 2; docs/hf-experiments.md): from a
// judge-loop or five-roles run's episodes, by iteration range, the solver's pay (its turns'
// reward) and the judge's share of y on right and on wrong answers; and, where the judge works
// the task before each verdict, how often that working was right, its y to wrong answers after its
// own right working (the comparison), to planted slips, and how often all of an answer's workings
// were wrong against independent draws at their rate.
//   npx tsx experiments/judge-pay.ts RUN_DIR [--split 25]
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonl } from '../src/store/jsonl.js';
import type { Episode, Turn } from '../src/core/types.js';
import { arg } from './script.js';

const dir = process.argv[2];
if (!dir || dir.startsWith('--')) throw new Error('usage: judge-pay.ts RUN_DIR [--split 25]');
const split = Number(arg('split', '25'));
const shards = readdirSync(join(dir, 'episodes')).filter((f) => f.endsWith('.jsonl'));
const episodes = shards.flatMap((f) => readJsonl(join(dir, 'episodes', f))) as unknown as (Episode & {
  iteration: number;
})[];
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const f3 = (x: number) => x.toFixed(3);
// a solver's answer is right when it parsed to the answer of the task it was filed under
const right = (t: Turn) => t.action.valid && t.action.value === t.task?.answer;
const final = (t: Turn) =>
  String(t.action.value ?? '')
    .split(/[,=]/)
    .at(-1);

for (const [name, keep] of [
  [`iterations 1 to ${split}`, (i: number) => i <= split],
  [`iterations ${split + 1} on`, (i: number) => i > split],
] as const) {
  const pay = { right: [] as number[], wrong: [] as number[] };
  const yes = { right: [] as number[], wrong: [] as number[] };
  const allWrong: number[] = [];
  const owns: boolean[] = [];
  const afterOwn = { right: [] as number[], wrong: [] as number[] }; // y on right answers, by the working just before
  const wrongAfterRight: number[] = []; // y on wrong answers after the judge's own right working: its comparison
  const slips: number[] = []; // y on the slips the arena planted (five-roles judgePlant)

  for (const e of episodes.filter((x) => keep(x.iteration))) {
    const answers = new Map(e.turns.filter((t) => t.role === 'solver' && t.task).map((t) => [t.task!.id, t]));
    const judge = e.turns.filter((t) => t.role === 'judge' && t.task);
    for (const [id, a] of answers) {
      const side = right(a) ? 'right' : 'wrong';
      if (typeof a.reward === 'number') pay[side].push(a.reward);
      const verdicts = judge.filter(
        (t) => t.task!.id === id && t.action.valid && /^[yn]$/.test(String(t.action.value)),
      );
      if (verdicts.length) yes[side].push(mean(verdicts.map((t) => (t.action.value === 'y' ? 1 : 0))));
      const mine = judge.filter((t) => t.task!.id.startsWith(`${id}/`) && t.task!.id.endsWith('/own'));
      const ok = mine.map((t) => t.action.valid && final(t) === a.task!.answer);
      owns.push(...ok);
      // the k-th verdict follows the k-th own working
      const y = (v: Turn) => (v.action.value === 'y' ? 1 : 0);
      if (right(a)) verdicts.forEach((v, k) => k < ok.length && afterOwn[ok[k] ? 'right' : 'wrong'].push(y(v)));
      else verdicts.forEach((v, k) => k < ok.length && ok[k] && wrongAfterRight.push(y(v)));
      slips.push(...judge.filter((t) => t.task!.id === `${id}/slip` && t.action.valid).map(y));
      if (ok.length > 1) allWrong.push(ok.every((x) => !x) ? 1 : 0);
    }
  }
  console.log(`${name}: ${pay.right.length + pay.wrong.length} answers, ${pay.wrong.length} wrong`);
  console.log(`  the solver's pay: right ${f3(mean(pay.right))}, wrong ${f3(mean(pay.wrong))}`);
  console.log(`  the judge's y: right ${f3(mean(yes.right))}, wrong ${f3(mean(yes.wrong))}`);
  if (owns.length) {
    const p = 1 - mean(owns.map(Number));
    console.log(`  the judge's own working wrong: ${f3(p)} of ${owns.length}`);
    console.log(
      `  its y to right answers after right working ${f3(mean(afterOwn.right))}, after wrong ${f3(mean(afterOwn.wrong))}`,
    );
    console.log(
      `  its y to wrong answers after right working ${f3(mean(wrongAfterRight))} of ${wrongAfterRight.length}`,
    );
    if (slips.length) console.log(`  its y to planted slips ${f3(mean(slips))} of ${slips.length}`);
    if (allWrong.length) {
      const k = owns.length / allWrong.length;
      const expected = allWrong.length * p ** k;
      console.log(
        `  all ${k.toFixed(0)} workings on an answer wrong: ${mean(allWrong) * allWrong.length} of ${allWrong.length} (independent: ${expected.toFixed(0)})`,
      );
    }
  }
}
