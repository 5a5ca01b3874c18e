import { rolePrompt } from '../core/prompt.js';
import { SolverRole } from '../core/solver.js';
import { invalid, type Observation } from '../core/role.js';
import type { Task } from '../core/types.js';
import type { PolicyInput } from '../models/types.js';
import { drawUnseen, mixtureSource, type MixtureCell, type TaskSource } from '../tasks/common.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import { digitSlip } from '../tasks/slips.js';
import { ROLE_KINDS, taskFamily } from '../registry.js';
import type { TaskFamily } from '../core/task-family.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { Rng } from '../util/rng.js';
import type { PretrainConfig } from './schema.js';

/** The tasks of a config: solver training tasks, proposer completions (as tasks), the held-out set and the extra sets. */
export interface PretrainCorpus {
  train: Task[];
  proposals: Task[];
  test: Task[];
  sets: Record<string, Task[]>;
  verdicts: Verdict[];
  verdictTest: Verdict[];
}

/** A judge example: a task, the answers shown, and the verdict that is right. */
export interface Verdict {
  task: Task;
  answers: string[];
  verdict: string;
  /** solve-first: the judge's own answer, written first (the task's), that the verdict compares the shown one with */
  own?: string;
}

/**
 * Draws the corpus from one Rng seeded with `seed`: solver tasks, then proposer tasks,
 * then the held-out set (skipping every corpus prompt, repeats allowed, as disjointSplit),
 * then each extra set (distinct, skipping the corpus). Without mixture and proposer this is
 * exactly `disjointSplit(family, task.difficulty, train, heldOut, seed)`.
 */
export function pretrainCorpus(
  config: PretrainConfig,
  family: TaskFamily<unknown> = taskFamily(config.task.family),
): PretrainCorpus {
  const cells = (field: string, mixture: PretrainConfig['mixture']): MixtureCell<unknown>[] =>
    (mixture ?? [{ difficulty: {}, weight: 1 }]).map((c, i) => ({
      difficulty: cellDifficulty(
        family,
        config.task.difficulty,
        c.difficulty,
        mixture ? `${field}[${i}].difficulty` : 'task.difficulty',
      ),
      weight: c.weight,
    }));
  const kept = config.corpus.heldOutFile ? keptHeldOut(config, family) : undefined;
  const solver = avoiding(mixtureSource(family, cells('mixture', config.mixture)), kept, 'the solver corpus');
  const rng = new Rng(config.seed);
  const nProposals = config.proposer ? Math.round(config.proposer.share * config.corpus.train) : 0;
  const nVerdicts = config.verdicts ? Math.round(config.verdicts.share * config.corpus.train) : 0;
  const name = family.name;
  const train = Array.from({ length: config.corpus.train - nProposals - nVerdicts }, (_, i) => ({
    ...solver(rng, i),
    id: `${name}-train-${i}`,
  }));
  const proposer =
    config.proposer &&
    avoiding(
      mixtureSource(
        family,
        cells(config.proposer.mixture ? 'proposer.mixture' : 'mixture', config.proposer.mixture ?? config.mixture),
      ),
      kept,
      'the proposer corpus',
    );
  const proposals = Array.from({ length: nProposals }, (_, i) => ({
    ...proposer!(rng, i),
    id: `${name}-proposal-${i}`,
  }));
  const seen = new Set([...train, ...proposals].map((t) => t.prompt));
  const test =
    kept?.tasks ??
    drawUnseen(rng, solver, config.corpus.heldOut, seen, { what: 'corpus.heldOut' }).map((t, i) => ({
      ...t,
      id: `${name}-test-${i}`,
    }));
  const sets: Record<string, Task[]> = {};
  for (const [set, s] of Object.entries(config.heldOutSets)) {
    const source = mixtureSource(family, [
      {
        difficulty: cellDifficulty(family, config.task.difficulty, s.difficulty, `heldOutSets.${set}.difficulty`),
        weight: 1,
      },
    ]);
    sets[set] = drawUnseen(rng, source, s.count, seen, { what: `heldOutSets.${set}`, distinct: true }).map((t, i) => ({
      ...t,
      id: `${name}-${set}-${i}`,
    }));
  }
  // drawn last, so a config without verdicts draws the corpus it always did; verdict tasks are
  // kept off the held-out prompts (their right answers are shown), held-out verdicts are on them
  const verdicts = config.verdicts
    ? verdictExamples(
        rng,
        drawUnseen(rng, solver, nVerdicts, new Set([...test, ...Object.values(sets).flat()].map((t) => t.prompt)), {
          what: 'verdicts',
        }),
        config.verdicts,
        'verdict',
      )
    : [];
  const verdictTest = config.verdicts
    ? verdictExamples(rng, test.slice(0, config.verdicts.heldOut), config.verdicts, 'verdict-test')
    : [];
  return { train, proposals, test, sets, verdicts, verdictTest };
}

/**
 * Verdict examples on `tasks` (each with an answer): a wrong answer is another task's answer
 * that differs from the right one (any family: no answer is made up), or with `slips` the
 * right one with one digit changed; `pairwise` of them show two answers, the rest one. With
 * solve-first the judge's own answer is the task's (its working, when the task has one).
 */
function verdictExamples(rng: Rng, tasks: Task[], o: NonNullable<PretrainConfig['verdicts']>, tag: string): Verdict[] {
  const answers = [...new Set(tasks.map((t) => t.answer).filter((a): a is string => a !== undefined))];
  if (answers.length < 2)
    throw new Error(`verdicts: the tasks have fewer than two distinct answers; a wrong answer cannot be drawn`);
  // drawn only when asked, so a config without slips draws the corpus it always did
  const slip = (right: string) => (o.slips > 0 && rng.next() < o.slips ? digitSlip(right, rng, o.slip) : undefined);
  return tasks.map((task, i) => {
    const right = task.answer;
    if (right === undefined) throw new Error(`verdicts: task ${task.id} has no answer`);
    let wrong = slip(right) ?? right;
    while (wrong === right) wrong = answers[rng.int(answers.length)];
    const t = { ...task, id: `${task.family}-${tag}-${i}` };
    const own = o.working === 'solve-first' ? { own: task.target ?? right } : {};
    if (rng.next() < o.pairwise)
      return rng.next() < 0.5
        ? { task: t, answers: [right, wrong], verdict: 'A' }
        : { task: t, answers: [wrong, right], verdict: 'B' };
    return rng.next() < 0.5
      ? { task: t, answers: [right], verdict: 'y', ...own }
      : { task: t, answers: [wrong], verdict: 'n', ...own };
  });
}

export function cellDifficulty(
  family: TaskFamily<unknown>,
  base: Record<string, unknown>,
  cell: Record<string, unknown>,
  field: string,
): unknown {
  return family.validate({ ...base, ...cell }, field);
}

/** The first `corpus.heldOut` tasks of `corpus.heldOutFile`, and their prompts. */
function keptHeldOut(config: PretrainConfig, family: TaskFamily<unknown>): { tasks: Task[]; prompts: Set<string> } {
  const file = config.corpus.heldOutFile!;
  const tasks = readTasksJsonl(file, family.name).slice(0, config.corpus.heldOut);
  if (tasks.length < config.corpus.heldOut)
    throw new Error(
      `corpus.heldOutFile: ${file} has ${tasks.length} tasks, fewer than corpus.heldOut (${config.corpus.heldOut})`,
    );
  if (tasks.some((t) => t.answer === undefined))
    throw new Error(`corpus.heldOutFile: ${file} has a task without an answer`);
  return { tasks, prompts: new Set(tasks.map((t) => t.prompt)) };
}

/** `source` redrawn (from the same Rng) whenever it gives a held-out prompt; `source` itself without a held-out file, so other corpora draw as they always did. */
function avoiding(source: TaskSource, kept: { prompts: Set<string> } | undefined, what: string): TaskSource {
  if (!kept) return source;
  return (rng, i) => {
    for (let draw = 0; draw < 10000; draw++) {
      const t = source(rng, i);
      if (!kept.prompts.has(t.prompt)) return t;
    }
    throw new Error(`corpus.heldOutFile: ${what} found no prompt outside the held-out file in 10000 draws`);
  };
}

/** The proposer's prompt: its role renders a request for a new task of the family. */
function proposerPrompt(tokenizer: Tokenizer, family: TaskFamily<unknown>): number[] {
  const role = ROLE_KINDS.proposer(() => invalid('a proposer parses its own output'));
  return rolePrompt(tokenizer, role, role.render({ task: { id: 'seed', family: family.name, prompt: '' } }));
}

/** Supervised examples: each solver task's answer (or working), and each proposer task's prompt as what the proposer writes. */
export function trainingExamples(
  corpus: PretrainCorpus,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
): PolicyInput[] {
  const solverRole = new SolverRole((o) => family.parseAnswer(o));
  const solver = corpus.train.map((t) => ({
    prompt: rolePrompt(tokenizer, solverRole, t.prompt),
    completion: [...tokenizer.encode(t.target ?? t.answer!), tokenizer.eos],
  }));
  const prompt = proposerPrompt(tokenizer, family);
  const judge = ROLE_KINDS.judge(() => invalid('a judge parses its own output'));
  const line = (observation: Observation, text: string): PolicyInput => ({
    prompt: rolePrompt(tokenizer, judge, judge.render(observation)),
    completion: [...tokenizer.encode(text), tokenizer.eos],
  });
  // solve-first: the task alone answered, then the verdict shown that answer beside the one judged
  const verdicts = corpus.verdicts.flatMap((v) =>
    v.own === undefined
      ? [line({ task: v.task, answers: v.answers }, v.verdict)]
      : [
          line({ task: v.task, answers: [] }, v.own),
          line({ task: v.task, working: v.own, answers: v.answers }, v.verdict),
        ],
  );
  return [
    ...solver,
    ...corpus.proposals.map((t) => ({ prompt, completion: [...tokenizer.encode(t.prompt), tokenizer.eos] })),
    ...verdicts,
  ];
}
