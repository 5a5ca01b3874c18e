import { existsSync } from 'node:fs';
import type { Task } from '../../core/types.js';
import { readTasksJsonl, type TaskCheck } from '../../tasks/jsonl.js';
import { evaluateSolver } from '../../core/evaluate.js';
import { z } from 'zod';
import {
  dataFile,
  evaluatorKind,
  pickRole,
  tokenizerOf,
  type Evaluator,
  type EvaluatorKind,
  textModel,
} from './types.js';

/**
 * Held-out accuracy of a solver role on a JSONL file of labeled tasks: greedy pass@1 every
 * time, and maj@N with `samples` answers at `temperature` when the run asks for thorough
 * measures (its start, its end, a reference sync). Metrics: `pass1`, `maj<N>`, `mean<N>` (the
 * share of the N sampled answers that are right).
 */
export class AccuracyEvaluator implements Evaluator {
  constructor(
    readonly name: string,
    readonly role: string,
    readonly every: number,
    private readonly tasks: readonly Task[],
    private readonly o: {
      samples: number;
      temperature: number;
      maxNewTokens: number;
      seed: number;
      model: string;
      /** the role's stop strings */
      stopStrings?: readonly string[];
    },
  ) {}

  heldOutPrompts(): string[] {
    return this.tasks.map((t) => t.prompt);
  }

  async run(ctx: Parameters<Evaluator['run']>[0]): Promise<Record<string, number>> {
    const samples = ctx.thorough ? this.o.samples : 0;
    const r = await evaluateSolver(
      textModel(ctx, this.o.model, this.name),
      tokenizerOf(ctx, this.o.model),
      ctx.family,
      this.tasks,
      {
        samples,
        temperature: this.o.temperature,
        maxNewTokens: this.o.maxNewTokens,
        stopStrings: this.o.stopStrings,
        seed: this.o.seed + ctx.iteration,
        replicas: ctx.replicas,
        id: this.o.model,
        onEpisode: ctx.onEpisode,
      },
    );
    return {
      pass1: r.pass1,
      ...(r.majN !== undefined ? { [`maj${r.samples}`]: r.majN } : {}),
      ...(r.meanN !== undefined ? { [`mean${r.samples}`]: r.meanN } : {}),
    };
  }
}

/** `{ kind: accuracy, name, role?, options: { data, samples, temperature } }`; the file is read and checked whole here. */
export function accuracyKind(check: (where: string) => TaskCheck): EvaluatorKind {
  const options = z.strictObject({
    data: dataFile(),
    samples: z.number().int().nonnegative().optional(),
    temperature: z.number().positive().optional(),
  });
  return evaluatorKind(options, (spec, c, plan, where) => {
    const { data } = spec.options;
    if (!existsSync(data)) throw new Error(`${where}.options.data: ${data} does not exist`);
    const role = pickRole(spec, c, 'solver', where);
    const labeled = check(where);
    const tasks = readTasksJsonl(data, plan.family.name, (t) =>
      t.answer === undefined ? 'no answer; evaluation needs one per task' : labeled(t),
    );
    if (tasks.length === 0) throw new Error(`${where}.options.data: ${data} holds no tasks`);
    const temperature =
      spec.options.temperature ?? c.eval.temperature ?? (c.arena.temperature > 0 ? c.arena.temperature : 1);
    const samples = spec.options.samples ?? c.eval.samples;
    return new AccuracyEvaluator(spec.name, role, spec.every ?? c.eval.every, tasks, {
      samples,
      temperature,
      maxNewTokens: c.arena.maxNewTokens,
      stopStrings: c.roles[role].stop ?? c.arena.stop,
      seed: c.seed,
      model: c.roles[role].model,
    });
  });
}
