/** The memory-dialogue arena's evaluator kind (`memory-qa`). */
import { MANAGERS, MemoryDialogueArena } from './memory-dialogue.js';
import type { Task } from '../src/core/types.js';
import { Rng } from '../src/util/rng.js';
import { seatOf, VerdictsEvaluator } from '../src/engine/evaluators/verdicts.js';
import { z } from 'zod';
import { evaluatorKind, positiveInt, temperature } from '../src/engine/evaluators/types.js';

/**
 * `{ kind: memory-qa, name, options: { count, sessions, manager, temperature, seed } }`: the
 * memory manager and answer agent on `count` held-out dialogues of `sessions` sessions (the
 * run's difficulty otherwise), greedy unless `temperature` is given. The dialogues are drawn
 * from their own seed (`seed`, default 1000 + the run's), so they are not the training ones.
 * `manager` plays a baseline in place of the model (always-add, keep-last, none) with the
 * run's answer agent, on the same dialogues: baselines measured in the same run; `rule` plays
 * the rule manager (it reads each turn's slot), the ceiling a manager reaches with that reader. Metrics:
 * `qa_accuracy`, and for the model's manager `valid_rate`, `op_add` ... and `bank_size`.
 */
const MemoryQaOptions = z.strictObject({
  count: positiveInt().default(64),
  sessions: positiveInt().optional(),
  manager: z.enum(MANAGERS).default('model'),
  temperature: temperature().default(0),
  seed: z.number().int().nonnegative().optional(),
});

export const memoryQaKind = evaluatorKind(MemoryQaOptions, (spec, c, plan, where) => {
  if (!(plan.arena instanceof MemoryDialogueArena))
    throw new Error(
      `${where}: memory-qa measures a memory-dialogue arena's roles; arena '${plan.arena.kind}' is not one`,
    );
  const o = spec.options;
  const difficulty = plan.family.validate({ ...c.tasks.difficulty, ...(o.sessions ? { sessions: o.sessions } : {}) });
  const rng = new Rng(o.seed ?? 1000 + c.seed);
  const tasks: Task[] = Array.from({ length: o.count }, (_, i) => ({
    ...plan.family.generate(rng, difficulty, i),
    id: `dialogue-heldout-${i}`,
  }));
  const arena = new MemoryDialogueArena({ ...plan.arena.options, manager: o.manager, rerollouts: 0 }, plan.family);
  const seats = Object.fromEntries(Object.keys(arena.roles).map((id) => [id, seatOf(c, plan, id)]));
  return new VerdictsEvaluator(spec.name, spec.every ?? c.eval.every, 'memory', arena, tasks, seats, {
    temperature: o.temperature,
    maxNewTokens: c.arena.maxNewTokens,
    stopStrings: c.arena.stop,
    seed: c.seed,
  });
});
