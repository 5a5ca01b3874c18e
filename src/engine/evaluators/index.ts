import type { ExperimentConfig } from '../../config/schema.js';
import type { TaskCheck } from '../../tasks/jsonl.js';
import type { Task } from '../../core/types.js';
import type { Plan } from '../plan.js';
import { evaluatorRegistry } from '../../registry.js';
import { parseOptions } from '../../config/issues.js';
import { AccuracyEvaluator } from './accuracy.js';
import { pickRole, type Evaluator } from './types.js';

export type { EvalContext, Evaluator } from './types.js';

/**
 * The run's evaluators: `tasks.eval` as the unnamed accuracy evaluator (metrics `eval/pass1`,
 * `eval/majN`, as before), then each of `evaluators` (metrics `eval/<name>/...`). Each is built,
 * and its data read and checked, before any work.
 */
export function buildEvaluators(
  c: ExperimentConfig,
  plan: Plan,
  evalSet: readonly Task[],
  check: (where: string) => TaskCheck,
): Evaluator[] {
  const out: Evaluator[] = [];
  if (evalSet.length > 0) {
    const role = pickRole({ name: '', options: {} }, c, 'solver', 'tasks.eval');
    const temperature = c.eval.temperature ?? (c.arena.temperature > 0 ? c.arena.temperature : 1);
    out.push(
      new AccuracyEvaluator('', role, c.eval.every, evalSet, {
        samples: c.eval.samples,
        temperature,
        maxNewTokens: c.arena.maxNewTokens,
        stopStrings: c.roles[role].stop ?? c.arena.stop,
        seed: c.seed,
        model: c.roles[role].model,
      }),
    );
  }
  const kinds = evaluatorRegistry(plan.definitions, check);
  c.evaluators.forEach((spec, i) => {
    const where = `evaluators.${i}`;
    if (c.evaluators.findIndex((o) => o.name === spec.name) !== i)
      throw new Error(`${where}.name: '${spec.name}' is used twice`);
    const kind = kinds.resolve(spec.kind, `${where}.kind`);
    const ev = kind.make(
      { ...spec, options: parseOptions(kind.options, spec.options, `${where}.options`) },
      c,
      plan,
      where,
    );
    const model = c.roles[ev.role]?.model;
    if (model !== undefined && c.models[model]?.kind === 'remote')
      throw new Error(
        `${where}: role '${ev.role}' plays on model '${model}', which is remote; evaluators measure models trained here`,
      );
    out.push(ev);
  });
  return out;
}

/** Metric names of an evaluator's results: `eval/<key>` for the unnamed one, else `eval/<name>/<key>`. */
export function evalMetrics(ev: Evaluator, result: Record<string, number>): Record<string, number> {
  const prefix = ev.name === '' ? 'eval/' : `eval/${ev.name}/`;
  return Object.fromEntries(Object.entries(result).map(([k, v]) => [prefix + k, v]));
}
