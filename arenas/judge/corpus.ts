/**
 * A judge base's corpus: a solver taught by supervised training to answer the judge role's
 * prompt (a task and two answers, one right and one wrong, in a random order; or one
 * answer, right or wrong, pointwise) with a verdict and end of sequence. With `labels: coin`
 * the verdict is drawn at random, not the right one: RL from a solver base cannot discover
 * the verdict format (it never writes `A` or `B` in the judge role), and a base at chance
 * learns which answer is right from the verdict rewards alone (JudgeLRM also starts from a
 * model that follows the format). With `labels: right` it is a judge learned from labels,
 * as a reward model is.
 */
import { z } from 'zod';
import { digitSlip } from './index.js';
import { JudgeRole } from '../../roles/others.js';
import type { Task } from '../../src/core/types.js';
import { greedyTexts } from '../../src/models/greedy.js';
import type { TinyLM } from '../../src/models/tinylm.js';
import type { PolicyInput } from '../../src/models/types.js';
import type { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';

export const JudgeCorpusSchema = z
  .strictObject({
    /** JSONL tasks the examples are drawn from (with answers) */
    tasks: z.string().min(1),
    /** two answers and a letter (`A`/`B`), or one answer and `y`/`n` */
    mode: z.enum(['pairwise', 'pointwise']).default('pairwise'),
    /** none; self: the verdict follows the model's own answer to the task; solve-first (pointwise): two turns, the task alone answered first, as the judge arena's solveFirst asks */
    working: z.enum(['none', 'self', 'solve-first']).default('none'),
    /** with working: the judge's own answer is its greedy one, or the task's answer (so no label contradicts the comparison) */
    own: z.enum(['greedy', 'right']).default('greedy'),
    /** random verdicts (the format only), or the right ones */
    labels: z.enum(['coin', 'right']).default('coin'),
    /** the share of wrong answers that are the right one with one digit changed (else off by a little) */
    slips: z.number().min(0).max(1).default(0),
    /** how many examples are drawn */
    examples: z.number().int().positive().default(4096),
  })
  .refine((j) => j.working !== 'solve-first' || j.mode === 'pointwise', {
    message: 'working: solve-first needs mode: pointwise',
    path: ['working'],
  });
export type JudgeCorpus = z.output<typeof JudgeCorpusSchema>;

// wrong answers as a weak solver writes them: off by a little, or in one digit
const OFFSETS = [-11, -10, -9, -2, -1, 1, 2, 9, 10, 11];

/** The judge examples of `o`, drawn with `seed` from `tasks`; `model` writes its own answers when `working` asks for them. */
export function judgeExamples(
  model: TinyLM,
  tokenizer: CharTokenizer,
  tasks: readonly Task[],
  o: JudgeCorpus,
  seed: number,
): PolicyInput[] {
  const role = new JudgeRole();
  const rng = new Rng(seed);
  const own = new Map<string, string>();
  if (o.working !== 'none' && o.own === 'right') tasks.forEach((t) => own.set(t.id, t.answer!));
  else if (o.working !== 'none') {
    const answers = greedyTexts(
      model,
      tokenizer,
      tasks.map((t) => tokenizer.prompt(t.prompt, 'solver')),
      4,
      seed,
    );
    tasks.forEach((t, i) => own.set(t.id, answers[i]));
  }
  const line = (prompt: number[], text: string): PolicyInput => ({
    prompt,
    completion: [...tokenizer.encode(text), tokenizer.eos],
  });
  return Array.from({ length: o.examples }, () => {
    const task = tasks[rng.int(tasks.length)];
    const right = task.answer!;
    const wrong =
      o.slips > 0 && rng.next() < o.slips
        ? digitSlip(right, rng)!
        : String(Math.max(0, Number(right) + OFFSETS[rng.int(OFFSETS.length)]));
    const answers =
      o.mode === 'pointwise' ? [rng.next() < 0.5 ? right : wrong] : rng.next() < 0.5 ? [right, wrong] : [wrong, right];
    const letters = o.mode === 'pointwise' ? ['y', 'n'] : ['A', 'B'];
    const truth = answers[0] === right ? letters[0] : letters[1];
    const verdict = o.labels === 'right' ? truth : letters[rng.int(2)];
    if (o.working === 'solve-first') {
      const mine = own.get(task.id)!;
      return [
        line(tokenizer.prompt(role.render({ task, answers: [] }), role.kind), mine),
        line(tokenizer.prompt(role.render({ task, working: mine, answers }), role.kind), verdict),
      ];
    }
    return [line(tokenizer.prompt(role.render({ task, answers }), role.kind), (own.get(task.id) ?? '') + verdict)];
  }).flat();
}
