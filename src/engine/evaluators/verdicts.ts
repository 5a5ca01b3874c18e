import { existsSync, readFileSync } from 'node:fs';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents } from '../../core/agents.js';
import { AdversarialCriticArena } from '../../../arenas/critic/index.js';
import { JudgeArena } from '../../../arenas/judge/index.js';
import type { Arena } from '../../core/arena.js';
import { playGroups } from '../../core/operators/play-groups.js';
import type { Role } from '../../core/role.js';
import type { Task } from '../../core/types.js';
import { BatchingServer } from '../../serving/server.js';
import { readTasksJsonl, type TaskCheck } from '../../tasks/jsonl.js';
import { hashSeed } from '../loop-parts.js';
import { firstWrongStep, sumOperands } from '../../tasks/scratchpad.js';
import { z } from 'zod';
import {
  dataFile,
  evaluatorKind,
  positiveInt,
  temperature,
  tokenizerOf,
  type EvalContext,
  type EvaluatorFactory,
  type Evaluator,
  type EvaluatorKind,
  textModel,
} from './types.js';

/**
 * A judge or critic measured on held-out tasks: an arena plays each task once with the run's
 * own roles and models (sampled at `temperature`, seeded by the iteration, so a resumed run
 * measures the same), and the arena's metrics for `role` are the measure, its prefix
 * dropped. The judge arena's: `accuracy`, `f1`, `position_consistency` (pairwise),
 * `valid_rate`, `judged_share`; the critic arena's: `accuracy`, `planted_accuracy`,
 * `right_accuracy`, `valid_rate`, and for a critic that checks first `check_accuracy` (and
 * per step `step_accuracy`). No model learns here.
 */
export class VerdictsEvaluator implements Evaluator {
  constructor(
    readonly name: string,
    readonly every: number,
    readonly role: string,
    private readonly arena: Arena,
    private readonly tasks: readonly Task[],
    private readonly seats: Record<string, { role: Role; model: string; maxNewTokens?: number; temperature?: number }>,
    private readonly o: { temperature: number; maxNewTokens: number; seed: number },
  ) {}

  async run(ctx: EvalContext): Promise<Record<string, number>> {
    const servers = new Map<string, BatchingServer>();
    const serverOf = (model: string) => {
      if (!servers.has(model))
        servers.set(
          model,
          new BatchingServer(
            `${this.name}-${model}`,
            textModel(ctx, model, this.name),
            hashSeed(this.o.seed, ctx.iteration, `eval-${this.name}-${model}`),
            undefined,
            ctx.replicas,
          ),
        );
      return servers.get(model)!;
    };
    const bindings = Object.fromEntries(
      Object.entries(this.seats).map(([id, s]) => [
        id,
        {
          role: s.role,
          model: s.model,
          maxNewTokens: s.maxNewTokens,
          temperature: s.temperature,
          server: serverOf(s.model),
          tokenizer: tokenizerOf(ctx, s.model),
        },
      ]),
    );
    const agents = new Agents(bindings, ctx.tokenizer, {
      maxNewTokens: this.o.maxNewTokens,
      temperature: this.o.temperature,
    });
    const episodes = await firstValueFrom(playGroups(this.arena, this.tasks, 1, agents).pipe(toArray()));
    const prefix = `${this.role}/`;
    return Object.fromEntries(
      Object.entries(this.arena.metrics?.(episodes) ?? {})
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, v]) => [k.slice(prefix.length), v]),
    );
  }
}

/** A role's seat at a held-out table: the run's own role, model and token budget. */
function seatOf(c: Parameters<EvaluatorFactory>[1], plan: Parameters<EvaluatorFactory>[2], id: string) {
  return { role: plan.roles[id], model: c.roles[id].model, maxNewTokens: c.roles[id].maxNewTokens };
}

/** The labeled held-out tasks of an evaluator's `data` option. */
function heldOut(check: (where: string) => TaskCheck, data: string, family: string, where: string): Task[] {
  if (!existsSync(data)) throw new Error(`${where}.options.data: ${data} does not exist`);
  const labeled = check(where);
  const tasks = readTasksJsonl(data, family, (t) =>
    t.answer === undefined ? 'no answer; a verdict needs the truth' : labeled(t),
  );
  if (tasks.length === 0) throw new Error(`${where}.options.data: ${data} holds no tasks`);
  return tasks;
}

/**
 * `{ kind: verdicts, name, options: { data, temperature, answerTemperature, repeats } }`: the
 * config's judge arena and its solver and judge roles, on a held-out file: the answers sampled
 * at `answerTemperature` (default the arena's, so a run that samples hotter to explore can
 * still be measured on the answers it started from), the verdicts at `temperature` when given
 * (default the arena's; 0: greedy), each task played `repeats` times (default 1) for a steadier figure;
 * the arena's planted slips are left out (the judge is measured on the solver's own answers).
 */
export function verdictsKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    temperature: temperature().optional(),
    answerTemperature: z.number().positive().optional(),
    repeats: positiveInt().default(1),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof JudgeArena))
      throw new Error(`${where}: verdicts measures a judge arena's judge; arena '${plan.arena.kind}' is not one`);
    const { repeats } = spec.options;
    // each repeat is its own task id, so the arena draws its showing orders afresh
    const tasks = heldOut(check, spec.options.data, plan.family.name, where).flatMap((t) =>
      Array.from({ length: repeats }, (_, r) => (r === 0 ? t : { ...t, id: `${t.id}~${r}` })),
    );
    // the answers are sampled (a greedy solver would write one answer, with nothing to tell apart); the verdicts at `temperature` when given
    const arenaTemperature = c.arena.temperature > 0 ? c.arena.temperature : 1;
    const sampled = spec.options.answerTemperature ?? arenaTemperature;
    const judge = { ...seatOf(c, plan, 'judge'), temperature: spec.options.temperature ?? arenaTemperature };
    // held out means the solver's own answers: nothing planted
    const arena = plan.arena.options.plant
      ? new JudgeArena({ ...plan.arena.options, plant: 0 }, plan.family)
      : plan.arena;
    return new VerdictsEvaluator(
      spec.name,
      spec.every ?? c.eval.every,
      'judge',
      arena,
      tasks,
      { solver: seatOf(c, plan, 'solver'), judge },
      { temperature: sampled, maxNewTokens: c.arena.maxNewTokens, seed: c.seed },
    );
  });
}

/**
 * `{ kind: critic, name, options: { data, corrupter, temperature } }`: the config's critic on
 * held-out sums, each shown with an error the environment plants (`corrupter`: 'slip', a
 * carry slip, by default, or 'random') and shown right, one verdict each. With
 * `corrupter: given`, each line of `data` carries the wrong working to show as `working`
 * (a solver's own mistakes, ProcessBench's kind of test; the rule checker labels the first
 * wrong step). Greedy unless `temperature` is given: a critic's verdict is one token.
 */
export function criticKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    temperature: temperature().default(0),
    corrupter: z.enum(['slip', 'random', 'given']).default('slip'),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    if (!(plan.arena instanceof AdversarialCriticArena))
      throw new Error(
        `${where}: critic measures an adversarial-critic arena's critic; arena '${plan.arena.kind}' is not one`,
      );
    const { data, corrupter } = spec.options;
    const tasks = heldOut(check, data, plan.family.name, where);
    const given = corrupter === 'given' ? givenWorkings(data, where) : undefined;
    // asked as the training arena asks it (a critic that checks first checks first here too)
    const { checkFirst, perStep, checker } = plan.arena.options;
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
      { temperature: spec.options.temperature, maxNewTokens: c.arena.maxNewTokens, seed: c.seed },
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
