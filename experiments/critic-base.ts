/**
 * A step critic's base, and a check of what a critic can learn. From a solver checkpoint
 * that writes sums with working, supervised training on the critic role's prompt (a sum and
 * working for it, right or with one planted error, as the adversarial-critic arena shows it)
 * with one verdict: the first wrong step, or '0'.
 * - `--labels random` (the base): the verdict is drawn at random, so the model learns the
 *   format and nothing about which step is wrong (SPC's critic also starts from a model that
 *   follows the format); RL must teach the rest.
 * - `--labels right` (a diagnostic, not a recipe: it reads labels RL never sees): the true
 *   verdict, with held-out greedy accuracy every `--every` steps on carry slips and on random
 *   numbers. If this stays near chance, so will the RL critic: the ceiling is the model's.
 * Errors are planted as the arena plants them (`--corrupter slip|random`, on a random step).
 * With `--check-first` the critic is taught the arena's checkFirst turns: shown the task and
 * the working's first step it solves on rightly (what the solver it starts from can do), and
 * shown its results beside the shown ones it gives the verdict (random, or right under
 * `--labels right`); held-out accuracy then runs both turns greedily, the verdict after the
 * model's own check. `--per-step` (with --check-first; the arena's perStep) asks of each step
 * alone whether its result agrees with the right one written before it (`69+34=102>103?`,
 * 'y' or 'n'), the verdict being the first step it says 'n' to; `--with-task` (a diagnostic)
 * writes the task before each step.
 *
 *   npx tsx experiments/critic-base.ts --from checkpoints/base-sum3-working --out checkpoints/base-sum3-critic
 *     [--labels random|right] [--steps 150] [--corrupter random|slip] [--check-first [--per-step [--with-task]]]
 */
import { firstValueFrom, toArray } from 'rxjs';
import { AdversarialCriticArena, firstRejected } from '../arenas/critic/index.js';
import { playGroups } from '../arenas/operators/play-groups.js';
import type { ArenaContext } from '../arenas/types.js';
import { CriticRole } from '../roles/others.js';
import { initBackend } from '../src/backend/index.js';
import type { Task, Turn } from '../src/core/types.js';
import { saveModel } from '../src/models/store.js';
import { SupervisedTrainer } from '../src/models/supervised.js';
import { arithmetic } from '../src/tasks/arithmetic.js';
import { resultsAgree, rightResults, sumOperands } from '../src/tasks/scratchpad.js';
import { readTasksJsonl } from '../src/tasks/jsonl.js';
import { Rng } from '../src/util/rng.js';
import { arg, flag, greedyTexts, loadLanguageModel } from './script.js';

const labels = arg('labels', 'random');
if (labels !== 'random' && labels !== 'right') throw new Error(`--labels: random or right, got '${labels}'`);
await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const role = new CriticRole();

const checkFirst = flag('check-first');
type Showing = { task: Task; working: string; steps: number; verdict: string };

/** The critic's showings of `tasks` as the arena makes them: the task, the working shown and the true verdict. */
async function showings(
  tasks: { id: string; family: string; prompt: string }[],
  corrupter: string,
): Promise<Showing[]> {
  const arena = new AdversarialCriticArena({ corrupter, verdicts: 1, checkFirst }, arithmetic);
  const seen: Showing[] = [];
  const ctx: ArenaContext = {
    async act(_r, o, options) {
      // a check turn answers with the right results, so that the verdict turn that follows is asked as the arena asks it
      const check = o.stage === 'check' ? truth(o.task, o.working as string) : null;
      if (check === null)
        seen.push({
          task: o.task,
          working: o.working as string,
          steps: o.steps as number,
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
  await firstValueFrom(playGroups(arena, tasks, 1, ctx).pipe(toArray()));
  return seen;
}

/** The critic's prompt tokens for a showing: its verdict turn (after a check, the right one unless given, when it checks first) or its check turn. */
const prompt = (s: Showing, stage?: 'check', check?: string) =>
  tokenizer.prompt(
    role.render({
      task: s.task,
      working: s.working,
      steps: s.steps,
      ...(stage ? { stage } : {}),
      ...(checkFirst && !stage ? { check: check ?? truth(s.task, s.working) } : {}),
    }),
    role.kind,
  );
const tokens = (text: string) => [...tokenizer.encode(text), tokenizer.eos];
/** The results a right check of `working` reaches. */
const truth = (task: { prompt: string }, working: string) => rightResults(sumOperands(task.prompt)!, working)!;
/** The right check of `working`: its first step's result, then the rest solved on (`68,68+34=102` for `12+56=69,69+34=103`). */
function solvedOn(s: Showing): string {
  const sums = truth(s.task, s.working).split(',').map(Number);
  return [sums[0], ...sums.slice(1).map((sum, k) => `${sums[k]}+${sum - sums[k]}=${sum}`)].join(',');
}

const seed = Number(arg('seed', '1'));
const rng = new Rng(seed);
const difficulty = arithmetic.validate({ digits: 2, operands: 3, operators: '+', scratchpad: true });
const train = Array.from({ length: 8192 }, (_, i) => ({
  ...arithmetic.generate(rng, difficulty, i),
  id: `critic-train-${seed}-${i}`,
}));
const perStep = flag('per-step');
/**
 * --per-step: step k alone with the critic's result before the shown one, as the arena's perStep asks it
 * (`69+34=102>103?`), and whether they agree; --with-task (a diagnostic layout) writes the task before it
 */
const withTask = flag('with-task');
const stepPrompt = (s: Showing, k: number, own: string) =>
  tokenizer.prompt(
    `${withTask ? s.task.prompt : ''}${role.render({ task: s.task, working: s.working, steps: s.steps, check: own, step: k + 1 })}`,
    role.kind,
  );
const stepTruth = (s: Showing, k: number) => (resultsAgree(sumOperands(s.task.prompt)!, s.working)![k] ? 'y' : 'n');
if (perStep && !checkFirst) throw new Error('--per-step: needs --check-first (each step is asked beside the check)');
if (withTask && !perStep)
  throw new Error('--with-task: needs --per-step (it writes the task before each step asked alone)');
if (flag('bare'))
  throw new Error(
    "--bare: gone; --per-step now asks each step without the task (the arena's perStep), --with-task writes it before",
  );
const checkExample = (s: Showing) => ({ prompt: prompt(s, 'check'), completion: tokens(solvedOn(s)) });
const all = (await showings(train, arg('corrupter', 'random'))).flatMap((s) =>
  perStep
    ? [
        checkExample(s),
        ...Array.from({ length: s.steps }, (_, k) => ({
          prompt: stepPrompt(s, k, truth(s.task, s.working)),
          completion: tokens(labels === 'right' ? stepTruth(s, k) : rng.next() < 0.5 ? 'y' : 'n'),
        })),
      ]
    : [
        { prompt: prompt(s), completion: tokens(labels === 'right' ? s.verdict : String(rng.int(s.steps + 1))) },
        ...(checkFirst ? [checkExample(s)] : []),
      ],
);
// an example longer than the model's context (a long slip's verdict) is left out, and counted
const examples = all.filter((e) => e.prompt.length + e.completion.length - 1 <= model.config.context);
if (examples.length < all.length)
  console.log(`left out ${all.length - examples.length} of ${all.length} examples, longer than the context`);
const heldout = readTasksJsonl(
  arg('heldout', 'checkpoints/base-sum3-working/heldout.jsonl'),
  'arithmetic',
  () => undefined,
);
const probes = { slip: await showings(heldout, 'slip'), random: await showings(heldout, 'random') };

/** Greedy verdict accuracy on `set`, after the model's own greedy check when it checks first (and the share of checks that reach the right results). */
function accuracy(set: Showing[]): { verdict: number; check?: number } {
  const checks = checkFirst
    ? greedyTexts(
        model,
        tokenizer,
        set.map((s) => prompt(s, 'check')),
        16,
      ).map(
        (t, i) =>
          role.parse(t, { task: set[i].task, working: set[i].working, steps: set[i].steps, stage: 'check' }).value ??
          '',
      )
    : [];
  // per step: the first step it says 'n' to is its verdict
  const marks = perStep ? set.map((s) => Array.from({ length: s.steps }, () => '')) : [];
  if (perStep) {
    for (let k = 0; k < Math.max(...set.map((s) => s.steps)); k++) {
      const asked = set.flatMap((s, i) => (k < s.steps ? [i] : []));
      greedyTexts(
        model,
        tokenizer,
        asked.map((i) => stepPrompt(set[i], k, checks[i])),
        2,
      ).forEach((t, j) => (marks[asked[j]][k] = t.trim()));
    }
  }
  const verdicts = perStep
    ? marks.map((m) => firstRejected(m.map((x) => (x === 'y' || x === 'n' ? x : null))) ?? '')
    : greedyTexts(
        model,
        tokenizer,
        set.map((s, i) => prompt(s, undefined, checks[i])),
        2,
      );
  const verdict = verdicts.filter((t, i) => t.trim().slice(-1) === set[i].verdict).length / set.length;
  return {
    verdict: +verdict.toFixed(3),
    ...(checkFirst
      ? { check: +(checks.filter((c, i) => c === truth(set[i].task, set[i].working)).length / set.length).toFixed(3) }
      : {}),
  };
}
const report = (step: number, loss?: number) => {
  const slip = accuracy(probes.slip),
    random = accuracy(probes.random);
  console.log(
    JSON.stringify({
      step,
      ...(loss === undefined ? {} : { loss: +loss.toFixed(4) }),
      slip_accuracy: slip.verdict,
      random_accuracy: random.verdict,
      ...(checkFirst ? { slip_check: slip.check, random_check: random.check } : {}),
    }),
  );
};

const steps = Number(arg('steps', labels === 'random' ? '150' : '2000')),
  every = Number(arg('every', '250'));
const trainer = new SupervisedTrainer(model, examples, { batchSize: 64, lr: Number(arg('lr', '3e-4')), seed });
report(0);
for (let step = 1; step <= steps; step++) {
  const loss = trainer.step();
  if (step % every === 0 || step === steps) report(step, loss);
}
trainer.dispose();
const out = arg('out', '');
if (out) {
  await saveModel(out, model, tokenizer, {
    made: 'experiments/critic-base.ts',
    from: arg('from'),
    steps,
    labels,
    corrupter: arg('corrupter', 'random'),
    checkFirst,
    perStep,
    withTask,
  });
  console.log(`wrote ${out}`);
}
