import { existsSync } from 'node:fs';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents } from '../../../arenas/agents.js';
import { JudgeArena } from '../../../arenas/judge.js';
import { playGroups } from '../../../arenas/operators/play-groups.js';
import type { Role } from '../../../roles/types.js';
import type { Task } from '../../core/types.js';
import { BatchingServer } from '../../serving/server.js';
import { readTasksJsonl, type TaskCheck } from '../../tasks/jsonl.js';
import { hashSeed } from '../loop-parts.js';
import { evaluatorOptions, isPath, isPositiveNumber, type EvalContext, type Evaluator, type EvaluatorFactory } from './types.js';

/**
 * A judge measured on held-out tasks: the judge arena plays each task once with the run's
 * own solver and judge (sampled at `temperature`, seeded by the iteration, so a resumed run
 * measures the same), and the arena's metrics are the measure: `accuracy`, `f1`,
 * `position_consistency` (pairwise), `valid_rate` and `judged_share`. No model learns here.
 */
export class VerdictsEvaluator implements Evaluator {
  readonly role = 'judge';

  constructor(
    readonly name: string,
    readonly every: number,
    private readonly arena: JudgeArena,
    private readonly tasks: readonly Task[],
    private readonly seats: { solver: { role: Role; model: string }; judge: { role: Role; model: string } },
    private readonly o: { temperature: number; maxNewTokens: number; seed: number },
  ) {}

  async run(ctx: EvalContext): Promise<Record<string, number>> {
    const servers = new Map<string, BatchingServer>();
    const serverOf = (model: string) => {
      if (!servers.has(model)) servers.set(model, new BatchingServer(`${this.name}-${model}`, ctx.models[model], hashSeed(this.o.seed, ctx.iteration, `eval-${this.name}-${model}`), undefined, ctx.replicas));
      return servers.get(model)!;
    };
    const bindings = Object.fromEntries(Object.entries(this.seats).map(([id, s]) => [id, { role: s.role, model: s.model, server: serverOf(s.model) }]));
    const agents = new Agents(bindings, ctx.tokenizer, { maxNewTokens: this.o.maxNewTokens, temperature: this.o.temperature });
    const episodes = await firstValueFrom(playGroups(this.arena, this.tasks, 1, agents).pipe(toArray()));
    return Object.fromEntries(Object.entries(this.arena.metrics(episodes)).map(([k, v]) => [k.replace(/^judge\//, ''), v]));
  }
}

/** `{ kind: verdicts, name, options: { data, temperature } }`: the config's judge arena and its solver and judge roles, on a held-out file. */
export function verdictsFactory(check: (where: string) => TaskCheck): EvaluatorFactory {
  return (spec, c, plan, where) => {
    evaluatorOptions(where, spec.options, { data: isPath, temperature: isPositiveNumber });
    if (!(plan.arena instanceof JudgeArena)) throw new Error(`${where}: verdicts measures a judge arena's judge; arena '${plan.arena.kind}' is not one`);
    const data = spec.options.data as string | undefined;
    if (!data) throw new Error(`${where}.options.data: required (a JSONL file of labeled held-out tasks)`);
    if (!existsSync(data)) throw new Error(`${where}.options.data: ${data} does not exist`);
    const labeled = check(where);
    const tasks = readTasksJsonl(data, plan.family.name, (t) => (t.answer === undefined ? 'no answer; a verdict needs the truth' : labeled(t)));
    if (tasks.length === 0) throw new Error(`${where}.options.data: ${data} holds no tasks`);
    const seat = (id: 'solver' | 'judge') => ({ role: plan.roles[id], model: c.roles[id].model });
    const temperature = (spec.options.temperature as number | undefined) ?? (c.arena.temperature > 0 ? c.arena.temperature : 1);
    return new VerdictsEvaluator(spec.name, spec.every ?? c.eval.every, plan.arena, tasks, { solver: seat('solver'), judge: seat('judge') }, { temperature, maxNewTokens: c.arena.maxNewTokens, seed: c.seed });
  };
}
