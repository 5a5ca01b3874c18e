/** The flow arena's evaluator kind (`flow`): the flow's final accuracy on held-out sums. */
import { z } from 'zod';
import type { TaskCheck } from '../src/tasks/jsonl.js';
import { dataFile, evaluatorKind, temperature, type EvaluatorKind } from '../src/engine/evaluators/types.js';
import { heldOut, seatOf, VerdictsEvaluator } from '../src/engine/evaluators/verdicts.js';
import { FlowArena } from './flow.js';

/**
 * `{ kind: flow, name, options: { data, temperature } }`: the run's flow (its planner, with the
 * tool executor, rule verifier and rule generator) on each task of a held-out file once,
 * greedy unless `temperature` is given. Metrics: `accuracy`, `valid_rate`, `turns`,
 * `first_step`, `second_step` (arenas/flow.ts, flowMetrics).
 */
export function flowKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({ data: dataFile(), temperature: temperature().default(0) });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof FlowArena))
      throw new Error(`${where}: flow measures a flow arena's planner; arena '${plan.arena.kind}' is not one`);
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'flow',
      plan.arena,
      heldOut(check, spec.options.data, plan.family.name, where),
      { planner: seatOf(c, plan, 'planner') },
      {
        temperature: spec.options.temperature,
        maxNewTokens: c.arena.maxNewTokens,
        stopStrings: c.arena.stop,
        seed: c.seed,
      },
    );
  });
}
