import { firstValueFrom, from, mergeMap, toArray } from 'rxjs';
import { Agents } from '../../core/agents.js';
import { BatchingServer } from '../../serving/server.js';
import { bigramEntropy } from '../../util/bigram.js';
import { topCellShare } from '../../util/cells.js';
import { z } from 'zod';
import {
  evaluatorKind,
  pickRole,
  positiveInt,
  tokenizerOf,
  type EvalContext,
  type Evaluator,
  textModel,
} from './types.js';
import type { Role } from '../../core/role.js';

/**
 * What a proposer writes, measured apart from training: `samples` proposals at `temperature`,
 * each read by the family within `limits`. Metrics: `valid`, `distinct`, `cells` (distinct
 * difficulty cells), `top_cell_share` (the share in the most common cell), `bigram_entropy`, and the mean of each measure of the valid ones.
 */
export class ProposalsEvaluator implements Evaluator {
  constructor(
    readonly name: string,
    readonly role: string,
    readonly every: number,
    private readonly proposer: Role,
    private readonly o: {
      samples: number;
      temperature: number;
      maxNewTokens: number;
      stopStrings?: readonly string[];
      seed: number;
      model: string;
      limits: unknown;
    },
  ) {}

  async run(ctx: EvalContext): Promise<Record<string, number>> {
    const server = new BatchingServer(
      this.o.model,
      textModel(ctx, this.o.model, this.name),
      this.o.seed + ctx.iteration,
      undefined,
      ctx.replicas,
    );
    const agents = new Agents(
      { [this.role]: { role: this.proposer, model: this.o.model, server, tokenizer: tokenizerOf(ctx, this.o.model) } },
      ctx.tokenizer,
      { temperature: this.o.temperature, maxNewTokens: this.o.maxNewTokens, stopStrings: this.o.stopStrings },
    );
    const seed = { id: 'seed', family: ctx.family.name, prompt: '' };
    const turns = await firstValueFrom(
      from(Array.from({ length: this.o.samples })).pipe(
        mergeMap(() => agents.act(this.role, { task: seed })),
        toArray(),
      ),
    );
    const tasks = turns.flatMap((t) => {
      if (!t.action.valid || t.action.value === null) return [];
      const p = ctx.family.parseProposal!(t.action.value, this.o.limits);
      return 'task' in p ? [p.task] : [];
    });
    const m: Record<string, number> = { valid: tasks.length / turns.length };
    if (tasks.length === 0) return m;
    const measures = tasks.map((t) => ctx.family.measure!(t));
    for (const key of Object.keys(measures[0])) m[key] = measures.reduce((a, x) => a + x[key], 0) / measures.length;
    m.distinct = new Set(tasks.map((t) => t.prompt)).size / tasks.length;
    m.cells = new Set(measures.map((x) => JSON.stringify(x))).size;
    m.top_cell_share = topCellShare(measures);
    m.bigram_entropy = bigramEntropy(tasks.map((t) => t.prompt));
    return m;
  }
}

/** `{ kind: proposals, name, role?, options: { samples, temperature, limits } }`. */
const ProposalsOptions = z.strictObject({
  samples: positiveInt().default(64),
  temperature: z.number().positive().default(1),
  limits: z.record(z.string(), z.unknown()).optional(),
});

export const proposalsKind = evaluatorKind(ProposalsOptions, (spec, c, plan, where) => {
  if (!plan.family.parseProposal || !plan.family.measure)
    throw new Error(`${where}: task family '${plan.family.name}' cannot read proposals`);
  const role = pickRole(spec, c, 'proposer', where);
  const limits = spec.options.limits
    ? plan.family.validate(spec.options.limits, `${where}.options.limits`)
    : plan.family.validate(c.arena.options.limits ?? {}, 'arena.options.limits');
  const o = {
    samples: spec.options.samples,
    temperature: spec.options.temperature,
    maxNewTokens: c.arena.maxNewTokens,
    stopStrings: c.roles[role].stop ?? c.arena.stop,
    seed: c.seed,
    model: c.roles[role].model,
    limits,
  };
  return new ProposalsEvaluator(spec.name, role, spec.every ?? c.eval.every, plan.roles[role], o);
});
