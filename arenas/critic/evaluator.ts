/** The adversarial-critic arena's evaluator kind (`critic`): its critic measured on held-out sums. */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { TaskCheck } from '../../src/tasks/jsonl.js';
import {
  dataFile,
  evaluatorKind,
  positiveInt,
  temperature,
  type EvaluatorKind,
} from '../../src/engine/evaluators/types.js';
import { heldOut, seatOf, VerdictsEvaluator } from '../../src/engine/evaluators/verdicts.js';
import { firstWrongStep, sumOperands } from '../../src/tasks/scratchpad.js';
import { AdversarialCriticArena } from './index.js';
import { FiveRolesArena } from '../five-roles/index.js';

/**
 * `{ kind: critic, name, options: { data, corrupter, temperature } }`: the config's critic on
 * held-out sums, each shown with an error the environment plants (`corrupter`: 'slip', a
 * carry slip, by default, or 'random') and shown right, one verdict each. With
 * `corrupter: given`, each line of `data` carries the wrong working to show as `working`
 * (a solver's own mistakes, ProcessBench's kind of test; the rule checker labels the first
 * wrong step). Greedy unless `temperature` is given: a critic's verdict is one token. In a
 * five-roles arena the critic is asked as it is there: it checks first, then marks each step.
 */
export function criticKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    temperature: temperature().default(0),
    corrupter: z.enum(['slip', 'random', 'given']).default('slip'),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof AdversarialCriticArena) && !(plan.arena instanceof FiveRolesArena))
      throw new Error(
        `${where}: critic measures the critic of an adversarial-critic or five-roles arena; arena '${plan.arena.kind}' is neither`,
      );
    const { data, corrupter } = spec.options;
    const tasks = heldOut(check, data, plan.family.name, where);
    const given = corrupter === 'given' ? givenWorkings(data, where) : undefined;
    // asked as the training arena asks it (a critic that checks first checks first here too)
    const { checkFirst, perStep, checker } =
      plan.arena instanceof AdversarialCriticArena
        ? plan.arena.options
        : { checkFirst: true, perStep: true, checker: false };
    const arena = new AdversarialCriticArena(
      { corrupter, verdicts: 1, checkFirst, perStep, checker },
      plan.family,
      given,
    );
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'critic',
      arena,
      tasks,
      { critic: seatOf(c, plan, 'critic'), ...(checker ? { checker: seatOf(c, plan, 'checker') } : {}) },
      {
        temperature: spec.options.temperature,
        maxNewTokens: c.arena.maxNewTokens,
        stopStrings: c.arena.stop,
        seed: c.seed,
      },
    );
  });
}

/** The `working` of each line of a critic's held-out file, by task id (ids as readTasksJsonl gives them). */
function givenWorkings(path: string, where: string): Map<string, string> {
  const out = new Map<string, string>();
  readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const rec = JSON.parse(line) as { id?: string; prompt: string; working?: unknown };
      const fail = (what: string) => new Error(`${where}.options.data: ${path}:${i + 1}: ${what}`);
      if (typeof rec.working !== 'string') throw fail("corrupter 'given' needs a 'working' string on every line");
      const check = firstWrongStep(sumOperands(rec.prompt) ?? [], rec.working);
      if (!('first' in check) || check.first === 0)
        throw fail(
          `the working ${JSON.stringify(rec.working)} has no wrong step to name${'error' in check ? ` (${check.error})` : ''}`,
        );
      out.set(rec.id ?? `arithmetic-${i + 1}`, rec.working);
    });
  return out;
}
