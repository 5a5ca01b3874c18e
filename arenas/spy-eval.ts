/** The spy arena's evaluator kind (`spy`): the learner against uniform play and a frozen snapshot. */
import { SpyArena, type SpyRole } from './spy.js';
import type { Task } from '../src/core/types.js';
import { loadModel } from '../src/models/store.js';
import { seatOf, VerdictsEvaluator } from '../src/engine/evaluators/verdicts.js';
import { z } from 'zod';
import { evaluatorKind, positiveInt, temperature, type EvalContext } from '../src/engine/evaluators/types.js';
import type { RunModel } from '../src/engine/models.js';

const SpyEvalOptions = z.strictObject({
  games: positiveInt().default(128), // games per matchup, each its own deal (`spy-eval-<i>`, not the training deals)
  snapshot: z.string().min(1).optional(), // a frozen checkpoint (the base) to play against; default the learner's model's `checkpoint`
  temperature: temperature().optional(), // default the arena's
});

/**
 * `{ kind: spy, name, options: { games, snapshot, temperature } }`: the learner's model plays
 * `games` deals in each matchup, seeded by the iteration (a resumed run measures the same):
 * - `self/survival`, `self/vote_accuracy`: itself on both sides;
 * - `uniform/survival`: as the spy against civilians who say and vote uniformly at random;
 *   `uniform/vote_accuracy`: as the civilians against a uniform spy;
 * - `snapshot/survival`, `snapshot/vote_accuracy`: the same against the frozen snapshot;
 * - `<matchup>/odd_letter_vote` beside each vote accuracy: the civilians' votes for the one
 *   seat whose letter their word lacks, when there was one (oddLetterVotes; chance 1/3).
 * Chance is 1/(players - 1) for a uniform vote. No model learns here.
 */
export const spyEvalKind = evaluatorKind(SpyEvalOptions, (spec, c, plan, where) => {
  if (!(plan.arena instanceof SpyArena))
    throw new Error(`${where}: spy measures a spy arena's sides; arena '${plan.arena.kind}' is not one`);
  const base = plan.arena.options;
  const model = c.roles.spy.model;
  const path = spec.options.snapshot ?? c.models[model]?.checkpoint;
  const tasks: Task[] = Array.from({ length: spec.options.games }, (_, i) => ({
    id: `spy-eval-${i}`,
    family: plan.family.name,
    prompt: '',
  }));
  const o = {
    temperature: spec.options.temperature ?? c.arena.temperature,
    maxNewTokens: c.arena.maxNewTokens,
    seed: c.seed,
  };
  const frozen = `${model}@snapshot`;
  const matchup = (name: string, learner: SpyRole | 'both', other?: 'uniform' | 'snapshot') => {
    const sides = (['spy', 'civilian'] as const).filter(
      (r) => learner === 'both' || r === learner || other !== 'uniform',
    );
    const uniform = other === 'uniform' ? (['spy', 'civilian'] as const).filter((r) => r !== learner) : [];
    const arena = new SpyArena({ ...base, uniform, voteRerollouts: 0 }); // the cast votes alone: re-rollouts only train
    const seats = Object.fromEntries(
      sides.map((r) => {
        const seat = seatOf(c, plan, r);
        return [r, r === learner || learner === 'both' ? seat : { ...seat, model: frozen }];
      }),
    );
    return { name, keep: learner, ev: new VerdictsEvaluator(`${spec.name}-${name}`, 1, 'spy', arena, tasks, seats, o) };
  };
  const runs = [
    matchup('self', 'both'),
    matchup('uniform', 'spy', 'uniform'),
    matchup('uniform', 'civilian', 'uniform'),
    ...(path ? [matchup('snapshot', 'spy', 'snapshot'), matchup('snapshot', 'civilian', 'snapshot')] : []),
  ];
  let snapshot: RunModel | undefined;
  return {
    name: spec.name,
    role: 'spy',
    every: spec.every ?? c.eval.every,
    async run(ctx: EvalContext) {
      if (path && !snapshot) snapshot = (await loadModel(path)).model as RunModel;
      const models = snapshot ? { ...ctx.models, [frozen]: snapshot } : ctx.models;
      const out: Record<string, number> = {};
      for (const r of runs) {
        const m = await r.ev.run({ ...ctx, models });
        if (r.keep !== 'civilian') out[`${r.name}/survival`] = m.survival;
        if (r.keep !== 'spy') out[`${r.name}/vote_accuracy`] = m.vote_accuracy;
        if (r.keep !== 'spy' && m.odd_letter_vote !== undefined) out[`${r.name}/odd_letter_vote`] = m.odd_letter_vote;
        out[`${r.name}/valid_rate${r.keep === 'both' ? '' : `_${r.keep}`}`] = m.valid_rate;
      }
      return out;
    },
  };
});
