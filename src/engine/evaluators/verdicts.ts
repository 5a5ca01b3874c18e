import { existsSync, readFileSync } from 'node:fs';
import { firstValueFrom, tap, toArray } from 'rxjs';
import { Agents } from '../../core/agents.js';
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
    private readonly seats: Record<
      string,
      { role: Role; model: string; maxNewTokens?: number; temperature?: number; stopStrings?: readonly string[] }
    >,
    private readonly o: { temperature: number; maxNewTokens: number; seed: number; stopStrings?: readonly string[] },
  ) {}

  heldOutPrompts(): string[] {
    return this.tasks.map((t) => t.prompt);
  }

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
          stopStrings: s.stopStrings,
          server: serverOf(s.model),
          tokenizer: tokenizerOf(ctx, s.model),
        },
      ]),
    );
    const agents = new Agents(bindings, ctx.tokenizer, {
      maxNewTokens: this.o.maxNewTokens,
      temperature: this.o.temperature,
      stopStrings: this.o.stopStrings,
    });
    const episodes = await firstValueFrom(
      playGroups(this.arena, this.tasks, 1, agents).pipe(
        tap(() => ctx.onEpisode?.()),
        toArray(),
      ),
    );
    const prefix = `${this.role}/`;
    return Object.fromEntries(
      Object.entries(this.arena.metrics?.(episodes) ?? {})
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, v]) => [k.slice(prefix.length), v]),
    );
  }
}

/** A role's seat at a held-out table: the run's own role, model and token budget. */
export function seatOf(c: Parameters<EvaluatorFactory>[1], plan: Parameters<EvaluatorFactory>[2], id: string) {
  return {
    role: plan.roles[id],
    model: c.roles[id].model,
    maxNewTokens: c.roles[id].maxNewTokens,
    stopStrings: c.roles[id].stop,
  };
}

/** The labeled held-out tasks of an evaluator's `data` option. */
export function heldOut(check: (where: string) => TaskCheck, data: string, family: string, where: string): Task[] {
  if (!existsSync(data)) throw new Error(`${where}.options.data: ${data} does not exist`);
  const labeled = check(where);
  const tasks = readTasksJsonl(data, family, (t) =>
    t.answer === undefined ? 'no answer; a verdict needs the truth' : labeled(t),
  );
  if (tasks.length === 0) throw new Error(`${where}.options.data: ${data} holds no tasks`);
  return tasks;
}
