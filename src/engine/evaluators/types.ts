import { z } from 'zod';
import type { Kind } from '../../config/kind.js';
import type { ExperimentConfig } from '../../config/schema.js';
import type { RunModel } from '../models.js';
import type { LanguageModel } from '../../models/generate.js';
import type { GenerateReplicas } from '../../serving/server.js';
import type { TaskFamily } from '../../core/task-family.js';
import type { Tokenizer } from '../../tokenizer/types.js';
import type { Plan } from '../plan.js';

/** What an evaluator reads when it runs: the live models, by id, and the run's settings. */
export interface EvalContext {
  models: Readonly<Record<string, RunModel>>;
  /** the shared tokenizer (TinyLM's; what a remote model's turns are written in) */
  tokenizer: Tokenizer;
  /** each local model's own tokenizer */
  tokenizers?: Readonly<Record<string, Tokenizer>>;
  family: TaskFamily<unknown>;
  /** the iteration evaluated (seeds sampling, so a resumed run measures the same) */
  iteration: number;
  /** true at the start, the end and wherever costly measures are due (maj@N) */
  thorough: boolean;
  /** replicas of the models in other threads, when the run has them: batching servers share their batches with them */
  replicas?: GenerateReplicas;
  /** called as each evaluation episode ends, so a long evaluation can say how far it got */
  onEpisode?: () => void;
}

/**
 * A named evaluation: it measures one role (held-out accuracy of a solver, the validity and
 * difficulty of a proposer's tasks) and returns metrics without the `eval/` prefix.
 * The loop assumes no particular role: it runs whatever evaluators the config names.
 */
export interface Evaluator {
  readonly name: string;
  /** the role evaluated and the model it runs on */
  readonly role: string;
  readonly every: number;
  run(ctx: EvalContext): Promise<Record<string, number>>;
  /** called before the first update and after every update, evaluated or not: an evaluator that follows every iterate (fictitious play's average policy) */
  track?(ctx: EvalContext): void;
  /** what an evaluator that remembers between runs (a snapshot pool) keeps in each checkpoint: plain JSON */
  state?(): unknown;
  restore?(state: unknown): void;
  /** the task prompts it scores, which no training task may share (preflight drops them from tasks.train) */
  heldOutPrompts?(): readonly string[];
}

/** What a factory gets: the evaluator's config entry, the experiment and its resolved plan. */
export interface EvaluatorSpec {
  name: string;
  role?: string;
  every?: number;
  options: Record<string, unknown>;
}

/** Builds an evaluator from its config entry (its options parsed by its kind's schema; `where` names it in errors), the experiment and its resolved plan; it reads its data here, before any work. */
export type EvaluatorFactory = (spec: EvaluatorSpec, c: ExperimentConfig, plan: Plan, where: string) => Evaluator;

/** The role an evaluator measures: the one named, or the first of the kind it needs. */
export function pickRole(spec: EvaluatorSpec, c: ExperimentConfig, kind: string, where: string): string {
  if (spec.role !== undefined) {
    const r = c.roles[spec.role];
    if (!r)
      throw new Error(`${where}.role: unknown role '${spec.role}'; configured: ${Object.keys(c.roles).join(', ')}`);
    if (r.kind !== kind)
      throw new Error(`${where}.role: '${spec.role}' is a ${r.kind}; this evaluator measures a ${kind}`);
    return spec.role;
  }
  const found = Object.entries(c.roles).find(([, r]) => r.kind === kind);
  if (!found)
    throw new Error(`${where}: no role of kind '${kind}' to evaluate; configured: ${Object.keys(c.roles).join(', ')}`);
  return found[0];
}

/** An evaluator kind: its options' schema and its factory (src/config/kind.ts). */
export type EvaluatorKind = Kind<EvaluatorFactory>;

/** An evaluator kind from its option schema and a factory that gets its spec with the options parsed. */
export const evaluatorKind = <S extends z.ZodType<Record<string, unknown>>>(
  options: S,
  make: (spec: EvaluatorSpec & { options: z.output<S> }, c: ExperimentConfig, plan: Plan, where: string) => Evaluator,
): EvaluatorKind => ({ options, make: make as EvaluatorFactory });

export const positiveInt = () => z.number().int().positive();
/** a sampling temperature, 0 for greedy */
export const temperature = () => z.number().nonnegative();
/** a JSONL file of labeled tasks */
export const dataFile = () => z.string().min(1);

/** Model `id` as a language model; an MLP (a game's numbers) is refused, naming it. */
export function textModel(ctx: EvalContext, id: string, evaluator: string): LanguageModel {
  const m = ctx.models[id];
  if (m.kind === 'mlp')
    throw new Error(
      `evaluator '${evaluator}': model '${id}' is an mlp, which reads numbers; this evaluator reads text`,
    );
  return m;
}

/** The tokenizer of model `id`: its own, or the shared one. */
export function tokenizerOf(ctx: EvalContext, id: string): Tokenizer {
  return ctx.tokenizers?.[id] ?? ctx.tokenizer;
}
