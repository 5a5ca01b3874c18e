/** The judge arena's evaluator kind (`verdicts`): its judge measured on held-out tasks. */
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
import { JudgeArena } from './index.js';
import { FiveRolesArena } from '../five-roles/index.js';

/**
 * `{ kind: verdicts, name, options: { data, temperature, answerTemperature, repeats } }`: the
 * config's judge arena and its solver and judge roles, on a held-out file: the answers sampled
 * at `answerTemperature` (default the arena's, so a run that samples hotter to explore can
 * still be measured on the answers it started from), the verdicts at `temperature` when given
 * (default the arena's; 0: greedy), each task played `repeats` times (default 1) for a steadier figure;
 * the arena's planted slips are left out (the judge is measured on the solver's own answers).
 * With `answers: fixed` no solver answers: each task is judged on its own answer and a slip of
 * it (`slip`, default the arena's), drawn from the task id, so the set is the same at every
 * evaluation and in every run, half right and half wrong, whatever the solver has become.
 * In a five-roles arena the judge is asked as it is there (pointwise, its own working
 * first), on the fixed set only: there the solver's answers come from the whole protocol.
 */
export function verdictsKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    temperature: temperature().optional(),
    answerTemperature: z.number().positive().optional(),
    repeats: positiveInt().default(1),
    answers: z.enum(['solver', 'fixed']).default('solver'),
    slip: z.enum(['any', 'adjacent']).optional(),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    const five = plan.arena instanceof FiveRolesArena;
    if (!(plan.arena instanceof JudgeArena) && !five)
      throw new Error(
        `${where}: verdicts measures the judge of a judge or five-roles arena; arena '${plan.arena.kind}' is neither`,
      );
    if (five && spec.options.answers !== 'fixed')
      throw new Error(`${where}: in a five-roles arena verdicts measures the judge on a fixed set: set answers: fixed`);
    const trained = five ? { mode: 'pointwise', solveFirst: true, slip: 'any' } : (plan.arena as JudgeArena).options;
    const { repeats } = spec.options;
    // each repeat is its own task id, so the arena draws its showing orders afresh
    const tasks = heldOut(check, spec.options.data, plan.family.name, where).flatMap((t) =>
      Array.from({ length: repeats }, (_, r) => (r === 0 ? t : { ...t, id: `${t.id}~${r}` })),
    );
    // the answers are sampled (a greedy solver would write one answer, with nothing to tell apart); the verdicts at `temperature` when given
    const arenaTemperature = c.arena.temperature > 0 ? c.arena.temperature : 1;
    const sampled = spec.options.answerTemperature ?? arenaTemperature;
    const judge = { ...seatOf(c, plan, 'judge'), temperature: spec.options.temperature ?? arenaTemperature };
    // held out means the solver's own answers, nothing planted; or a fixed set: each task's answer and a slip of it
    const { answers, slip } = spec.options;
    const arena =
      answers === 'fixed'
        ? new JudgeArena(
            { ...trained, verdicts: 1, plant: 0, judgeAll: false, answers, slip: slip ?? trained.slip },
            plan.family,
          )
        : (plan.arena as JudgeArena).options.plant
          ? new JudgeArena({ ...trained, plant: 0 }, plan.family)
          : plan.arena;
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'judge',
      arena,
      tasks,
      { solver: seatOf(c, plan, 'solver'), judge },
      { temperature: sampled, maxNewTokens: c.arena.maxNewTokens, stopStrings: c.arena.stop, seed: c.seed },
    );
  });
}
