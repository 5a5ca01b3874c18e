/** The observer arena's evaluator kind (`observer`): the pair measured on held-out tasks. */
import { z } from 'zod';
import type { TaskCheck } from '../../src/tasks/jsonl.js';
import { dataFile, evaluatorKind, temperature, type EvaluatorKind } from '../../src/engine/evaluators/types.js';
import { heldOut, seatOf, VerdictsEvaluator } from '../../src/engine/evaluators/verdicts.js';
import { ObserverArena } from './index.js';

/**
 * `{ kind: observer, name, options: { data, temperature } }`: the config's observer arena on a
 * held-out file, each task played once, with one solver answer per text, the hint and the
 * baseline text written at `temperature` (default 0: greedy). Its measures are the arena's
 * `observer/*` metrics: `accuracy` (the solver's through the observer), `reference`,
 * `utility`, `hint_right`, `valid_rate`, `copies`, `length`. No model learns here.
 */
export function observerKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({ data: dataFile(), temperature: temperature().default(0) });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof ObserverArena))
      throw new Error(`${where}: observer measures an observer arena's pair; arena '${plan.arena.kind}' is not one`);
    const arena = new ObserverArena({ ...plan.arena.options, attempts: 1 }, plan.family);
    const t = spec.options.temperature;
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'observer',
      arena,
      heldOut(check, spec.options.data, plan.family.name, where),
      {
        observer: { ...seatOf(c, plan, 'observer'), temperature: t },
        solver: { ...seatOf(c, plan, 'solver'), temperature: t },
      },
      { temperature: t, maxNewTokens: c.arena.maxNewTokens, stopStrings: c.arena.stop, seed: c.seed },
    );
  });
}
