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
 *
 *   npx tsx src/experiments/critic-base.ts --from checkpoints/base-sum3-working --out checkpoints/base-sum3-critic [--labels random|right] [--steps 150] [--corrupter random|slip]
 */
import { firstValueFrom, toArray } from 'rxjs';
import { AdversarialCriticArena } from '../../arenas/critic.js';
import { playGroups } from '../../arenas/operators/play-groups.js';
import type { ArenaContext } from '../../arenas/types.js';
import { CriticRole } from '../../roles/others.js';
import { initBackend } from '../backend/index.js';
import type { Turn } from '../core/types.js';
import { generate } from '../models/generate.js';
import { saveModel } from '../models/store.js';
import { SupervisedTrainer } from '../models/supervised.js';
import { arithmetic } from '../tasks/arithmetic.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import { Rng } from '../util/rng.js';
import { arg, loadLanguageModel } from './script.js';

const labels = arg('labels', 'random');
if (labels !== 'random' && labels !== 'right') throw new Error(`--labels: random or right, got '${labels}'`);
await initBackend('auto');
const { model, tokenizer } = await loadLanguageModel(arg('from'));
const role = new CriticRole();

/** The critic's showings of `tasks` as the arena makes them: prompt tokens and the true verdict. */
async function showings(tasks: { id: string; family: string; prompt: string }[], corrupter: string) {
  const arena = new AdversarialCriticArena({ corrupter, verdicts: 1 }, arithmetic);
  const seen: { prompt: number[]; verdict: string; steps: number }[] = [];
  const ctx: ArenaContext = {
    async act(_r, observation, options) {
      seen.push({ prompt: tokenizer.prompt(role.render(observation), role.kind), verdict: options!.task!.answer!, steps: observation.steps as number });
      return { index: 0, role: 'critic', model: 'm', prompt: [], completion: [], logProbs: [], entropy: [], selfCertainty: [], text: '', action: { valid: false, value: null } } as Turn;
    },
  };
  await firstValueFrom(playGroups(arena, tasks, 1, ctx).pipe(toArray()));
  return seen;
}

const seed = Number(arg('seed', '1'));
const rng = new Rng(seed);
const difficulty = arithmetic.validate({ digits: 2, operands: 3, operators: '+', scratchpad: true });
const train = Array.from({ length: 8192 }, (_, i) => ({ ...arithmetic.generate(rng, difficulty, i), id: `critic-train-${seed}-${i}` }));
const examples = (await showings(train, arg('corrupter', 'random'))).map((s) => ({
  prompt: s.prompt,
  completion: [...tokenizer.encode(labels === 'right' ? s.verdict : String(rng.int(s.steps + 1))), tokenizer.eos],
}));
const heldout = readTasksJsonl(arg('heldout', 'checkpoints/base-sum3-working/heldout.jsonl'), 'arithmetic', () => undefined);
const probes = { slip: await showings(heldout, 'slip'), random: await showings(heldout, 'random') };

function accuracy(set: { prompt: number[]; verdict: string }[]): number {
  const gens = generate(model, set.map((p) => p.prompt), { maxNewTokens: 2, temperature: 0, seed: 1, eos: tokenizer.eos });
  return gens.filter((g, i) => tokenizer.decode(g.tokens.filter((x) => x !== tokenizer.eos)).trim().slice(-1) === set[i].verdict).length / set.length;
}
const report = (step: number, loss?: number) => console.log(JSON.stringify({ step, ...(loss === undefined ? {} : { loss: +loss.toFixed(4) }), slip_accuracy: +accuracy(probes.slip).toFixed(3), random_accuracy: +accuracy(probes.random).toFixed(3) }));

const steps = Number(arg('steps', labels === 'random' ? '150' : '2000')), every = Number(arg('every', '250'));
const trainer = new SupervisedTrainer(model, examples, { batchSize: 64, lr: Number(arg('lr', '3e-4')), seed });
report(0);
for (let step = 1; step <= steps; step++) {
  const loss = trainer.step();
  if (step % every === 0 || step === steps) report(step, loss);
}
trainer.dispose();
const out = arg('out', '');
if (out) {
  await saveModel(out, model, tokenizer, { made: 'src/experiments/critic-base.ts', from: arg('from'), steps, labels, corrupter: arg('corrupter', 'random') });
  console.log(`wrote ${out}`);
}
