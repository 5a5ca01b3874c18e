/**
 * A step critic's base corpus (`critic:` in a pretrain config). From a solver that writes sums
 * with working, the critic role is taught by supervised training on its prompt as the
 * adversarial-critic arena shows it (a sum and working for it, right or with one planted error)
 * with one verdict: the first wrong step, or '0'.
 * - `labels: random` (a base): the verdict is drawn at random, so the model learns the format and
 *   nothing about which step is wrong (SPC's critic also starts from a model that follows the
 *   format); RL must teach the rest.
 * - `labels: right` (a diagnostic, not a recipe: it reads labels RL never sees): the true verdict.
 *   If its held-out accuracy stays near chance, so will the RL critic's: the ceiling is the model's.
 * With `checkFirst` the critic is also taught the arena's check turn (the task and the working's
 * first step, solved on rightly); with `perStep` (the arena's perStep) each step is asked alone
 * whether its result agrees with the right one written before it (`69+34=102>103?`, y or n).
 */
import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { AdversarialCriticArena, firstRejected } from './index.js';
import { playGroups } from '../../src/core/operators/play-groups.js';
import type { ArenaContext } from '../../src/core/arena.js';
import { CriticRole } from '../../roles/others.js';
import type { Task, Turn } from '../../src/core/types.js';
import { rolePrompt } from '../../src/core/prompt.js';
import { greedyTexts } from '../../src/models/greedy.js';
import type { LanguageModel } from '../../src/models/generate.js';
import type { PolicyInput } from '../../src/models/types.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { resultsAgree, rightResults, sumOperands } from '../../src/tasks/scratchpad.js';
import type { Tokenizer } from '../../src/tokenizer/types.js';
import type { Rng } from '../../src/util/rng.js';

export const CriticCorpusSchema = z
  .strictObject({
    /** how the error is planted, as the arena plants it: a random number of the result's length, or a carry slip */
    corrupter: z.enum(['random', 'slip']).default('random'),
    /** random verdicts (the format only), or the right ones (a diagnostic of what the model can learn) */
    labels: z.enum(['random', 'right']).default('random'),
    /** teach the arena's check turn before each verdict */
    checkFirst: z.boolean().default(false),
    /** ask each step alone, y or n (the arena's perStep); needs checkFirst */
    perStep: z.boolean().default(false),
    /**
     * the share of the training tasks shown to the critic, the rest kept as solver examples (sums
     * with working): one base that solves and criticises, as a sneaky and a critic adapter on one
     * frozen base need. Without it the critic's examples replace the solver corpus (a base from `init:`).
     */
    share: z.number().gt(0).lt(1).optional(),
  })
  .refine((c) => !c.perStep || c.checkFirst, {
    message: 'perStep needs checkFirst (each step is asked beside the check)',
    path: ['perStep'],
  });
export type CriticCorpus = z.output<typeof CriticCorpusSchema>;

/** One verdict turn as the arena asks it: the task, the working shown, its steps and the true verdict. */
export interface Showing {
  task: Task;
  working: string;
  steps: number;
  verdict: string;
}

const role = new CriticRole();

/** The results a right check of `working` reaches. */
const truth = (task: { prompt: string }, working: string) => rightResults(sumOperands(task.prompt)!, working)!;

/** The critic's showings of `tasks` as the arena makes them, its errors planted by `corrupter`. */
export async function showings(tasks: readonly Task[], o: CriticCorpus, corrupter = o.corrupter): Promise<Showing[]> {
  const arena = new AdversarialCriticArena({ corrupter, verdicts: 1, checkFirst: o.checkFirst }, arithmetic);
  const seen: Showing[] = [];
  const ctx: ArenaContext = {
    async act(_r, obs, options) {
      // a check turn answers with the right results, so that the verdict turn that follows is asked as the arena asks it
      const check = obs.stage === 'check' ? truth(obs.task, obs.working as string) : null;
      if (check === null)
        seen.push({
          task: obs.task,
          working: obs.working as string,
          steps: obs.steps as number,
          verdict: options!.task!.answer!,
        });
      return {
        index: 0,
        role: 'critic',
        model: 'm',
        prompt: [],
        completion: [],
        logProbs: [],
        entropy: [],
        selfCertainty: [],
        text: check ?? '',
        action: { valid: check !== null, value: check },
      } as Turn;
    },
  };
  await firstValueFrom(playGroups(arena, [...tasks], 1, ctx).pipe(toArray()));
  return seen;
}

/**
 * The critic's prompts for one corpus: its verdict turn (after a check), its check turn, and one
 * step asked alone; through the role's prompt (a chat template's system and user turns when the
 * tokenizer has one), as a run's critic is asked.
 */
function prompts(tokenizer: Tokenizer, o: CriticCorpus) {
  const ask = (text: string) => rolePrompt(tokenizer, role, text);
  return {
    verdict: (s: Showing, check?: string) =>
      ask(
        role.render({
          task: s.task,
          working: s.working,
          steps: s.steps,
          ...(o.checkFirst ? { check: check ?? truth(s.task, s.working) } : {}),
        }),
      ),
    check: (s: Showing) => ask(role.render({ task: s.task, working: s.working, steps: s.steps, stage: 'check' })),
    step: (s: Showing, k: number, own: string) =>
      ask(role.render({ task: s.task, working: s.working, steps: s.steps, check: own, step: k + 1 })),
  };
}

/** The right check of a showing: its first step's result, then the rest solved on (`68,68+34=102` for `12+56=69,69+34=103`). */
function solvedOn(s: Showing): string {
  const sums = truth(s.task, s.working).split(',').map(Number);
  return [sums[0], ...sums.slice(1).map((sum, k) => `${sums[k]}+${sum - sums[k]}=${sum}`)].join(',');
}

/**
 * The critic examples of `tasks` (sums with working); random labels are drawn from `rng`. An
 * example longer than `context` (a long slip's verdict) is left out and counted in `dropped`.
 */
export async function criticExamples(
  tokenizer: Tokenizer,
  tasks: readonly Task[],
  o: CriticCorpus,
  rng: Rng,
  context: number,
): Promise<{ examples: PolicyInput[]; dropped: number }> {
  const p = prompts(tokenizer, o);
  const tokens = (text: string) => [...tokenizer.encode(text), tokenizer.eos];
  const stepTruth = (s: Showing, k: number) => (resultsAgree(sumOperands(s.task.prompt)!, s.working)![k] ? 'y' : 'n');
  const checkExample = (s: Showing) => ({ prompt: p.check(s), completion: tokens(solvedOn(s)) });
  const all = (await showings(tasks, o)).flatMap((s) =>
    o.perStep
      ? [
          checkExample(s),
          ...Array.from({ length: s.steps }, (_, k) => ({
            prompt: p.step(s, k, truth(s.task, s.working)),
            completion: tokens(o.labels === 'right' ? stepTruth(s, k) : rng.next() < 0.5 ? 'y' : 'n'),
          })),
        ]
      : [
          { prompt: p.verdict(s), completion: tokens(o.labels === 'right' ? s.verdict : String(rng.int(s.steps + 1))) },
          ...(o.checkFirst ? [checkExample(s)] : []),
        ],
  );
  const examples = all.filter((e) => e.prompt.length + e.completion.length - 1 <= context);
  return { examples, dropped: all.length - examples.length };
}

/**
 * Greedy verdict accuracy on `set`, the verdict after the model's own greedy check when it checks
 * first (per step: the first step it says n to), and then the share of checks that are right.
 */
export function criticAccuracy(
  model: LanguageModel,
  tokenizer: Tokenizer,
  set: readonly Showing[],
  o: CriticCorpus,
): { verdict: number; check?: number } {
  const p = prompts(tokenizer, o);
  const checks = o.checkFirst
    ? greedyTexts(model, tokenizer, set.map(p.check), 16).map(
        (t, i) =>
          role.parse(t, { task: set[i].task, working: set[i].working, steps: set[i].steps, stage: 'check' }).value ??
          '',
      )
    : [];
  const marks = set.map((s) => Array.from({ length: s.steps }, () => ''));
  if (o.perStep) {
    for (let k = 0; k < Math.max(...set.map((s) => s.steps)); k++) {
      const asked = set.flatMap((s, i) => (k < s.steps ? [i] : []));
      greedyTexts(
        model,
        tokenizer,
        asked.map((i) => p.step(set[i], k, checks[i])),
        2,
      ).forEach((t, j) => (marks[asked[j]][k] = t.trim()));
    }
  }
  const verdicts = o.perStep
    ? marks.map((m) => firstRejected(m.map((x) => (x === 'y' || x === 'n' ? x : null))) ?? '')
    : greedyTexts(
        model,
        tokenizer,
        set.map((s, i) => p.verdict(s, checks[i])),
        2,
      );
  const share = (n: number) => +(n / set.length).toFixed(3);
  return {
    verdict: share(verdicts.filter((t, i) => t.trim().slice(-1) === set[i].verdict).length),
    ...(o.checkFirst ? { check: share(checks.filter((c, i) => c === truth(set[i].task, set[i].working)).length) } : {}),
  };
}
