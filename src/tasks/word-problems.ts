/**
 * The `word-problems` task family: grade-school word problems in GSM8K's format, written by
 * the project (nothing can be downloaded here). Each problem is one of a few templates
 * (buying, sharing, change, a sum then a difference, "half as many"), with a seeded name,
 * item and small numbers, and needs one or two operations. Its worked solution is in GSM8K's
 * style: sentences with calculator annotations (`48/2 = <<48/2=24>>24`) and a last line
 * `#### 24`. Answers are checked by the `math` family's rules (math-verify's semantics), so
 * a model trained here is rewarded the same way on a real GSM8K file read with `family: math`.
 *
 * Supervised training teaches the short form of the solution (`target`): the calculations
 * alone, one a line, then `#### N` (`48/2=24\n48+24=72\n#### 72`), which a small model can
 * hold; `gsm8kRow` gives the full GSM8K row.
 */
import { z } from 'zod';
import type { Task } from '../core/types.js';
import type { TaskFamily } from '../core/task-family.js';
import { Rng } from '../util/rng.js';
import { intIn, parseDifficulty } from './common.js';
import { math } from './math/index.js';

const NAME = 'word-problems';

/** The generator's knobs: at most how many operations a problem needs, and the largest number in a sum. */
export interface WordProblemsDifficulty {
  steps: number;
  maxNumber: number;
}

const DIFFICULTY = z.strictObject({
  steps: intIn(1, 2).default(2),
  maxNumber: intIn(10, 100).default(20),
});

/** One calculation of a solution: the expression, its value, and the sentence that states it (`{}` is `a op b = <<a op b=v>>v`). */
interface Step {
  expr: string;
  value: number;
  sentence: string;
}

/** A problem: its question, its steps, and the answer (the last step's value). */
export interface WordProblem {
  question: string;
  steps: Step[];
  answer: number;
}

const PEOPLE: readonly [string, 'He' | 'She'][] = [
  ['Ann', 'She'],
  ['Ben', 'He'],
  ['Carla', 'She'],
  ['David', 'He'],
  ['Emma', 'She'],
  ['Frank', 'He'],
  ['Grace', 'She'],
  ['Hugo', 'He'],
  ['Ivy', 'She'],
  ['Jack', 'He'],
  ['Lena', 'She'],
  ['Mark', 'He'],
  ['Nora', 'She'],
  ['Omar', 'He'],
  ['Paula', 'She'],
  ['Sam', 'He'],
];

const ITEMS = [
  'apples',
  'pencils',
  'stickers',
  'marbles',
  'cookies',
  'books',
  'cards',
  'shells',
  'stamps',
  'balloons',
  'oranges',
  'toy cars',
];

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)];
/** An integer in [lo, hi]. */
const between = (rng: Rng, lo: number, hi: number): number => lo + rng.int(hi - lo + 1);

function step(a: number, op: '+' | '-' | '*' | '/', b: number, sentence: (calc: string) => string): Step {
  const value = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
  const expr = `${a}${op}${b}`;
  return { expr, value, sentence: sentence(`${a} ${op} ${b} = <<${expr}=${value}>>${value}`) };
}

type Template = (rng: Rng, d: WordProblemsDifficulty) => Omit<WordProblem, 'answer'>;

/** One-operation templates. */
const ONE_STEP: Template[] = [
  (rng, d) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [a, b] = [between(rng, 2, d.maxNumber), between(rng, 1, d.maxNumber)];
    return {
      question: `${name} has ${a} ${item}. A friend gives ${name} ${b} more. How many ${item} does ${name} have now?`,
      steps: [step(a, '+', b, (c) => `${name} has ${c} ${item} now.`)],
    };
  },
  (rng, d) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const a = between(rng, 3, d.maxNumber);
    const b = between(rng, 1, a - 1);
    return {
      question: `${name} has ${a} ${item} and gives ${b} of them away. How many ${item} does ${name} have left?`,
      steps: [step(a, '-', b, (c) => `${name} has ${c} ${item} left.`)],
    };
  },
  (rng) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [a, p] = [between(rng, 2, 9), between(rng, 2, 9)];
    return {
      question: `${name} buys ${a} ${item} for $${p} each. How much money does ${name} spend?`,
      steps: [step(a, '*', p, (c) => `${name} spends ${c} dollars.`)],
    };
  },
  (rng) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [k, q] = [between(rng, 2, 9), between(rng, 2, 9)];
    return {
      question: `${name} has ${k * q} ${item} and shares them equally among ${k} friends. How many ${item} does each friend get?`,
      steps: [step(k * q, '/', k, (c) => `Each friend gets ${c} ${item}.`)],
    };
  },
];

/** Two-operation templates. */
const TWO_STEP: Template[] = [
  (rng, d) => {
    const [name, he] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [a, b] = [between(rng, 2, d.maxNumber), between(rng, 1, d.maxNumber)];
    const c = between(rng, 1, a + b - 1);
    const first = step(a, '+', b, (s) => `After buying more, ${name} has ${s} ${item}.`);
    return {
      question: `${name} has ${a} ${item}. ${he} buys ${b} more and then gives ${c} to a friend. How many ${item} does ${name} have now?`,
      steps: [first, step(first.value, '-', c, (s) => `Then ${name} has ${s} ${item}.`)],
    };
  },
  (rng) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [a, p] = [between(rng, 2, 9), between(rng, 2, 9)];
    const bill = [10, 20, 50, 100].find((x) => x >= a * p)!;
    const cost = step(a, '*', p, (s) => `The ${item} cost ${s} dollars.`);
    return {
      question: `${name} buys ${a} ${item} for $${p} each and pays with a $${bill} bill. How much change does ${name} get?`,
      steps: [cost, step(bill, '-', cost.value, (s) => `${name} gets ${s} dollars in change.`)],
    };
  },
  (rng, d) => {
    const [name, she] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const a = 2 * between(rng, 1, Math.floor(d.maxNumber / 2));
    const half = step(a, '/', 2, (s) => `${name} sold ${s} ${item} in May.`);
    return {
      question: `${name} sold ${a} ${item} in April, and then ${she.toLowerCase()} sold half as many ${item} in May. How many ${item} did ${name} sell in April and May altogether?`,
      steps: [half, step(a, '+', half.value, (s) => `${name} sold ${s} ${item} altogether.`)],
    };
  },
  (rng) => {
    const [name] = pick(rng, PEOPLE);
    const item = pick(rng, ITEMS);
    const [n, k, extra] = [between(rng, 2, 9), between(rng, 2, 9), between(rng, 1, 9)];
    const boxes = step(n, '*', k, (s) => `The boxes hold ${s} ${item}.`);
    return {
      question: `${name} has ${n} boxes with ${k} ${item} in each box, and ${extra} more ${item} outside the boxes. How many ${item} does ${name} have in all?`,
      steps: [boxes, step(boxes.value, '+', extra, (s) => `${name} has ${s} ${item} in all.`)],
    };
  },
];

/** One problem drawn from `rng`: a one- or two-operation template (two only when `d.steps` is 2), then its numbers. */
export function wordProblem(rng: Rng, d: WordProblemsDifficulty): WordProblem {
  const templates = d.steps === 2 ? [...ONE_STEP, ...TWO_STEP] : ONE_STEP;
  const p = pick(rng, templates)(rng, d);
  return { ...p, answer: p.steps.at(-1)!.value };
}

/** A problem as a GSM8K row: `question`, and `answer` the worked solution ending `#### N`. */
export function gsm8kRow(p: WordProblem): { question: string; answer: string } {
  return { question: p.question, answer: [...p.steps.map((s) => s.sentence), `#### ${p.answer}`].join('\n') };
}

/** The short solution supervised training teaches: each calculation on its line, then `#### N`. */
export function shortSolution(p: WordProblem): string {
  return [...p.steps.map((s) => `${s.expr}=${s.value}`), `#### ${p.answer}`].join('\n');
}

export const wordProblems: TaskFamily<WordProblemsDifficulty> = {
  name: NAME,
  defaults: { steps: 2, maxNumber: 20 },
  difficulty: DIFFICULTY,
  validate: (d: unknown, where = 'tasks.difficulty') => parseDifficulty(DIFFICULTY, d, where),
  generate(rng, d, index): Task {
    const p = wordProblem(rng, d);
    return {
      id: `${NAME}-${index}`,
      family: NAME,
      prompt: p.question,
      answer: String(p.answer),
      target: shortSolution(p),
    };
  },
  parseAnswer: (output) => math.parseAnswer(output),
  verify(task, output) {
    if (task.family !== NAME) throw new Error(`${NAME}: cannot verify task '${task.id}' of family '${task.family}'`);
    return math.verify({ ...task, family: math.name }, output);
  },
};

/** A GSM8K-format split: training rows and held-out rows. */
export interface Gsm8kSplit {
  train: { question: string; answer: string }[];
  test: { question: string; answer: string }[];
}

/**
 * Draws `train` distinct problems, then `test` distinct problems whose questions are neither
 * in the training rows nor in `exclude` (say a base's pretraining corpus), from one Rng seeded
 * with `seed`: the same arguments give the same rows. Throws when the difficulty has too few
 * distinct problems to fill the split (a thousand repeats in a row).
 */
export function gsm8kSplit(
  seed: number,
  d: WordProblemsDifficulty,
  counts: { train: number; test: number },
  exclude: ReadonlySet<string> = new Set(),
): Gsm8kSplit {
  const rng = new Rng(seed);
  const seen = new Set<string>();
  const draw = (n: number, skip: ReadonlySet<string>, what: string) => {
    const rows: WordProblem[] = [];
    // a thousand repeats in a row: the difficulty has (nearly) no unseen problem left
    for (let misses = 0; rows.length < n;) {
      const p = wordProblem(rng, d);
      if (seen.has(p.question) || skip.has(p.question)) {
        if (++misses > 1000) throw new Error(`${what}: found ${rows.length} of ${n} distinct problems`);
        continue;
      }
      misses = 0;
      seen.add(p.question);
      rows.push(p);
    }
    return rows.map(gsm8kRow);
  };
  const train = draw(counts.train, new Set(), 'train');
  return { train, test: draw(counts.test, exclude, 'test') };
}
