import { Agents } from '../core/agents.js';
import { invalid } from '../core/role.js';
import { ROLE_KINDS } from '../registry.js';
import type { Task } from '../core/types.js';
import type { LanguageModel } from '../models/generate.js';
import { BatchingServer } from '../serving/server.js';
import type { Replicas } from '../parallel/replicas.js';
import type { ParsedProposal, TaskFamily } from '../core/task-family.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { evaluateSolver, type EvalResult } from '../core/evaluate.js';
import type { PretrainCorpus, Verdict } from './corpus.js';
import { roleEvaluation, type RoleEvaluation, type RoleProbes } from './corpora/role.js';
import type { PretrainConfig } from './schema.js';

/** What a base's proposer writes: the share that parses inside the task bounds, and how the valid ones measure. */
export interface ProposalStats {
  samples: number;
  valid: number;
  cells: Record<string, number>;
  prompts: string[];
}

/** Held-out accuracy of the solver on every set, and the proposer's validity when there is one. */
export interface BaseEvaluation extends RoleEvaluation {
  /** absent for a memory base (its dialogues are not solved) */
  heldOut?: EvalResult;
  sets: Record<string, number>;
  proposer?: ProposalStats;
  verdicts?: number;
}

/**
 * Samples `samples` proposals at temperature 1 and reads each with the family's own
 * parser inside `limits`; valid ones are counted by the family's measure (its values
 * joined by '/', e.g. operands/digits/minDigits/totalDigits for arithmetic).
 */
export async function sampleProposals(
  model: LanguageModel,
  tokenizer: Tokenizer,
  family: TaskFamily<unknown>,
  limits: unknown,
  o: { samples: number; maxNewTokens: number; seed: number },
): Promise<ProposalStats> {
  if (!family.parseProposal || !family.measure)
    throw new Error(`proposer: task family '${family.name}' cannot read proposals (no parseProposal and measure)`);
  const server = new BatchingServer('proposer', model, o.seed);
  const agents = new Agents(
    { proposer: { role: ROLE_KINDS.proposer((o) => family.parseAnswer(o)), model: 'proposer', server } },
    tokenizer,
    {
      temperature: 1,
      maxNewTokens: o.maxNewTokens,
    },
  );
  const seed: Task = { id: 'seed', family: family.name, prompt: '' };
  const turns = await Promise.all(Array.from({ length: o.samples }, () => agents.act('proposer', { task: seed })));
  const stats: ProposalStats = { samples: o.samples, valid: 0, cells: {}, prompts: [] };
  for (const turn of turns) {
    const read: ParsedProposal = turn.action.valid
      ? family.parseProposal(turn.action.value!, limits)
      : { error: turn.action.error ?? 'invalid' };
    if (!('task' in read)) continue;
    const cell = Object.values(family.measure(read.task)).join('/');
    stats.cells[cell] = (stats.cells[cell] ?? 0) + 1;
    stats.prompts.push(read.task.prompt);
  }
  stats.valid = stats.prompts.length / o.samples;
  return stats;
}

export interface Base {
  model: LanguageModel;
  tokenizer: Tokenizer;
  family: TaskFamily<unknown>;
  corpus: PretrainCorpus;
  probes: RoleProbes;
  limits: unknown;
  proposalTokens: number;
  replicas?: Replicas;
}

/** Greedy pass@1 on the held-out set and each extra set; with a proposer, `samples` proposals sampled with `seed`. */
export async function evaluateBase(b: Base, config: PretrainConfig, seed: number): Promise<BaseEvaluation> {
  const solve = (tasks: Task[]) =>
    evaluateSolver(b.model, b.tokenizer, b.family, tasks, {
      samples: 0,
      maxNewTokens: config.maxNewTokens,
      replicas: b.replicas,
      id: 'base',
    });
  const sets: Record<string, number> = {};
  for (const [name, tasks] of Object.entries(b.corpus.sets)) sets[name] = (await solve(tasks)).pass1;
  const proposer =
    config.proposer &&
    (await sampleProposals(b.model, b.tokenizer, b.family, b.limits, {
      samples: config.proposer.samples,
      maxNewTokens: b.proposalTokens,
      seed,
    }));
  const verdicts = b.corpus.verdictTest.length
    ? await verdictAccuracy(b.model, b.tokenizer, b.corpus.verdictTest, config.maxNewTokens)
    : undefined;
  return {
    // a memory or game base is measured by its formats: it answers no task
    ...(!b.probes.memory && !b.probes.game && !b.probes.flow && { heldOut: await solve(b.corpus.test) }),
    sets,
    proposer,
    ...(verdicts !== undefined && { verdicts }),
    ...roleEvaluation(b.model, b.tokenizer, b.probes, config, seed),
  };
}

/** The share of `examples` whose greedy verdict is the right one (the judge role, as a run asks it). */
async function verdictAccuracy(
  model: LanguageModel,
  tokenizer: Tokenizer,
  examples: Verdict[],
  ownTokens: number,
): Promise<number> {
  const server = new BatchingServer('judge', model, 0);
  const agents = new Agents(
    { judge: { role: ROLE_KINDS.judge(() => invalid('a judge parses its own output')), model: 'judge', server } },
    tokenizer,
    // a verdict is one token; an own answer (solve-first) as long as a solver's
    { temperature: 0, maxNewTokens: examples.some((v) => v.own !== undefined) ? ownTokens : 2 },
  );
  // solve-first: the judge's own greedy answer first (it may be wrong), then the verdict beside it
  const turns = await Promise.all(
    examples.map(async (v) => {
      if (v.own === undefined) return agents.act('judge', { task: v.task, answers: v.answers });
      const own = await agents.act('judge', { task: v.task, answers: [] });
      return agents.act('judge', { task: v.task, working: own.text.trim(), answers: v.answers });
    }),
  );
  return turns.filter((t, i) => t.action.valid && t.action.value === examples[i].verdict).length / examples.length;
}

/** One evaluation as `key=value` fields of a log line. */
export function describeEvaluation(e: BaseEvaluation): string {
  const fields = [
    ...(e.heldOut ? [`heldout_pass1=${e.heldOut.pass1.toFixed(3)}`] : []),
    ...Object.entries(e.sets).map(([name, pass1]) => `${name}_pass1=${pass1.toFixed(3)}`),
  ];
  if (e.verdicts !== undefined) fields.push(`verdict_accuracy=${e.verdicts.toFixed(3)}`);
  for (const [set, a] of Object.entries(e.critic ?? {}))
    fields.push(`critic_${set}_accuracy=${a.verdict}${a.check === undefined ? '' : ` critic_${set}_check=${a.check}`}`);
  if (e.memory)
    fields.push(
      `manager_valid=${e.memory.manager} answer_valid=${e.memory.answer} manager_rule=${e.memory.managerRule} answer_rule=${e.memory.answerRule}`,
    );
  if (e.flow !== undefined) fields.push(`planner_valid=${e.flow}`);
  if (e.bank !== undefined) fields.push(`bank_right_op=${e.bank.toFixed(3)}`);
  if (e.observer)
    fields.push(`observer_copies=${e.observer.copies.toFixed(3)} observer_marked=${e.observer.marked.toFixed(3)}`);
  if (e.game)
    fields.push(`legal_mass=${e.game.legalMass.toFixed(4)} exploitability=${e.game.exploitability.toFixed(4)}`);
  if (e.proposer)
    fields.push(`proposer_valid=${e.proposer.valid.toFixed(3)} proposer_cells=${JSON.stringify(e.proposer.cells)}`);
  return fields.join(' ');
}

/** One evaluation as metrics: `eval/pass1` (held out), `eval/<set>/pass1`, and each role's measure under `eval/<role>/`. */
export function evaluationMetrics(e: BaseEvaluation): Record<string, number> {
  const m: Record<string, number> = {};
  if (e.heldOut) m['eval/pass1'] = e.heldOut.pass1;
  for (const [name, pass1] of Object.entries(e.sets)) m[`eval/${name}/pass1`] = pass1;
  if (e.verdicts !== undefined) m['eval/verdicts/accuracy'] = e.verdicts;
  for (const [set, a] of Object.entries(e.critic ?? {})) {
    m[`eval/critic/${set}_accuracy`] = a.verdict;
    if (a.check !== undefined) m[`eval/critic/${set}_check`] = a.check;
  }
  if (e.memory)
    Object.assign(m, {
      'eval/memory/manager_valid': e.memory.manager,
      'eval/memory/answer_valid': e.memory.answer,
      'eval/memory/manager_rule': e.memory.managerRule,
      'eval/memory/answer_rule': e.memory.answerRule,
    });
  if (e.flow !== undefined) m['eval/flow/planner_valid'] = e.flow;
  if (e.bank !== undefined) m['eval/bank/right_op'] = e.bank;
  if (e.observer)
    Object.assign(m, { 'eval/observer/copies': e.observer.copies, 'eval/observer/marked': e.observer.marked });
  if (e.game)
    Object.assign(m, { 'eval/game/legal_mass': e.game.legalMass, 'eval/game/exploitability': e.game.exploitability });
  if (e.proposer) m['eval/proposer/valid'] = e.proposer.valid;
  return m;
}
