/** The five-roles manager's evaluator kind (`bank`): its operations on held-out showings. */
import { defer, map, type Observable } from 'rxjs';
import { z } from 'zod';
import type { Arena, ArenaContext } from '../../src/core/arena.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import type { TaskCheck } from '../../src/tasks/jsonl.js';
import { dataFile, evaluatorKind, temperature, type EvaluatorKind } from '../../src/engine/evaluators/types.js';
import { heldOut, seatOf, VerdictsEvaluator } from '../../src/engine/evaluators/verdicts.js';
import { memoryOp } from '../../roles/memory.js';
import { Rng } from '../../src/util/rng.js';
import { opIsRight, type BankOp } from './bank.js';
import { bankShowings, type BankShowing } from './corpus.js';
import { FiveRolesArena } from './index.js';

/** One manager turn on each held-out showing, marked right or not (`opIsRight`). */
class BankProbeArena implements Arena {
  readonly kind = 'bank-probe';
  readonly roles = { memory: 'memory' };
  constructor(
    private readonly showings: ReadonlyMap<string, BankShowing>,
    private readonly size: number,
  ) {}

  play(task: Task, ctx: ArenaContext): Observable<Turn> {
    const s = this.showings.get(task.id)!;
    return defer(() => ctx.act('memory', s.observation, { compare: 'episode' })).pipe(
      map((turn) => {
        if (!turn.action.valid) return { ...turn, task: { ...task, answer: 'wrong' } };
        const bank = s.observation.memory as string[];
        const m = memoryOp(turn.action.value!, bank);
        const op: BankOp = { op: m.op, task: s.task, ...('id' in m ? { entry: m.id } : {}) };
        return { ...turn, task: { ...task, answer: opIsRight(op, bank, this.size, s.solved) ? 'right' : 'wrong' } };
      }),
    );
  }

  metrics(episodes: readonly Episode[]): Record<string, number> {
    const turns = episodes.flatMap((e) => e.turns);
    const share = (f: (t: Turn) => boolean) => turns.filter(f).length / Math.max(1, turns.length);
    return {
      'memory/right_op': share((t) => t.task?.answer === 'right'),
      'memory/valid_rate': share((t) => t.action.valid),
    };
  }
}

/**
 * `{ kind: bank, name, options: { data, noise, kept, temperature } }`: a five-roles arena's
 * manager on showings made from held-out sums as its pretraining made them (a bank of other
 * held-out prompts, the judge's and the critic's marks drawn around a truth, each flipped at
 * `noise`, and shown as the arena's `retrieve` shows them), the same at every evaluation
 * (drawn from `seed`); `right_op` is the share of operations that keep exactly what the solver
 * got wrong, `valid_rate` the share that parse.
 */
export function bankKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    noise: z.number().min(0).max(0.5).default(0.1),
    kept: z.number().min(0).max(1).default(0.3),
    seed: z.number().int().default(1),
    temperature: temperature().default(0),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof FiveRolesArena))
      throw new Error(`${where}: bank measures a five-roles arena's manager; arena '${plan.arena.kind}' is not one`);
    const { bank: size, attempts, retrieve } = plan.arena.options;
    const tasks = heldOut(check, spec.options.data, plan.family.name, where);
    const draw = { size, attempts, noise: spec.options.noise, kept: spec.options.kept, retrieve };
    const showings = bankShowings(tasks, draw, new Rng(spec.options.seed));
    const arena = new BankProbeArena(new Map(showings.map((s) => [s.task.id, s])), size);
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'memory',
      arena,
      tasks,
      { memory: seatOf(c, plan, 'memory') },
      {
        temperature: spec.options.temperature,
        maxNewTokens: c.arena.maxNewTokens,
        stopStrings: c.arena.stop,
        seed: c.seed,
      },
    );
  });
}
