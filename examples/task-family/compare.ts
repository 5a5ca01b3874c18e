// A custom task family: compare two numbers, answer '<', '>' or '='. A family is a seeded
// generator, a strict parser (model output is data: anything else is invalid, with why) and
// a verifier. Use it with `plugins: [./examples/task-family/compare.ts]` and
// `tasks: { family: compare, difficulty: { digits: 2 } }`.
import { defineTaskFamily, invalid, valid, type Task } from 'coevolve';

interface CompareDifficulty {
  digits: number;
}

const parseAnswer = (output: string) =>
  /^[<>=]$/.test(output.trim())
    ? valid(output.trim())
    : invalid(`an answer is one of < > =, got ${JSON.stringify(output)}`);

export const compare = defineTaskFamily<CompareDifficulty>({
  name: 'compare',
  defaults: { digits: 2 },
  validate(d: unknown): CompareDifficulty {
    const given = (d ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(given))
      if (key !== 'digits') throw new Error(`compare: unknown difficulty field '${key}'; known: digits`);
    const digits = given.digits ?? 2;
    if (!Number.isInteger(digits) || (digits as number) < 1 || (digits as number) > 6)
      throw new Error(`compare: digits must be an integer from 1 to 6, got ${JSON.stringify(digits)}`);
    return { digits: digits as number };
  },
  generate(rng, d, index): Task {
    const [a, b] = [rng.int(10 ** d.digits), rng.int(10 ** d.digits)];
    return { id: `compare-${index}`, family: 'compare', prompt: `${a}?${b}=`, answer: a < b ? '<' : a > b ? '>' : '=' };
  },
  parseAnswer,
  verify(task, output) {
    if (task.family !== 'compare' || task.answer === undefined)
      throw new Error(`compare: cannot verify task ${task.id} (family ${task.family}, answer ${task.answer})`);
    const a = parseAnswer(output);
    return a.valid && a.value === task.answer;
  },
});
