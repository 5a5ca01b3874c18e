import { howToMake } from '../pretrain/bases.js';
import { configuredSystem, rolePrompt } from '../core/prompt.js';
import type { Role } from '../core/role.js';
import { existsSync } from 'node:fs';
import type { ExperimentConfig } from '../config/schema.js';
import type { Task } from '../core/types.js';
import { verifyCheckpoint } from '../models/checkpoint.js';
import type { TaskCheck } from '../tasks/jsonl.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { freshConfig } from './models.js';
import { RemoteServer } from '../openai/remote.js';
import type { Plan } from './plan.js';
import { loadTaskSets } from './task-sets.js';
import { buildEvaluators, type Evaluator } from './evaluators/index.js';
import { join } from 'node:path';
import { readHfConfig } from '../models/hf/config.js';
import { loadHfTokenizer } from '../models/hf/text.js';
import type { Tokenizer } from '../tokenizer/types.js';

export interface Checked {
  train: Task[];
  evalSet: Task[];
  evaluators: Evaluator[];
}

/**
 * Everything a run reads, checked before it writes anything: each path the config names
 * exists and each checkpoint is whole; every task of both sets fits the tokenizer and the
 * context of the model that will read it (with the arena's maxNewTokens), each error naming
 * the file and line; every judge can reward some turn and the evaluation can score. A
 * situation that may be meant (some training tasks without an answer) is a warning.
 */
export async function preflight(c: ExperimentConfig, plan: Plan, warn: (line: string) => void): Promise<Checked> {
  for (const field of ['train', 'eval'] as const) {
    const s = c.tasks[field];
    if (s?.source === 'file' && !existsSync(s.path!)) throw new Error(`tasks.${field}.path: ${s.path} does not exist`);
  }
  // a judge's own loading (a reward function's module) fails here, naming it, before any model loads
  await Promise.all(plan.judges.map((j) => j.judge.ready?.()));
  const readers = await modelReaders(c, plan);
  // a token budget no prompt could fit beside is the config's mistake, said once rather than task by task
  for (const [roleId, r] of Object.entries(c.roles)) {
    const most = r.maxNewTokens ?? c.arena.maxNewTokens;
    const { context } = readers[r.model];
    if (most >= context) {
      const field = r.maxNewTokens === undefined ? 'arena' : `roles.${roleId}`;
      throw new Error(
        `${field}.maxNewTokens: ${most} new tokens leave no room for a prompt in model ${r.model}'s ${context} positions ` +
          `(role ${roleId}); at most ${context - 1}, less each prompt's length`,
      );
    }
  }
  const fits: TaskCheck = (task) => {
    const shown =
      plan.arena.observations?.(task) ?? Object.keys(plan.arena.roles).map((role) => ({ role, observation: { task } }));
    for (const { role: roleId, observation } of shown) {
      const wrong = fitsModel(
        plan.roles[roleId].render(observation),
        plan.roles[roleId],
        configuredSystem(plan.roles[roleId], c.roles[roleId].system, observation.task),
        readers[c.roles[roleId].model],
        c.roles[roleId].maxNewTokens ?? c.arena.maxNewTokens,
      );
      if (wrong) return `${wrong} (role ${roleId}, model ${c.roles[roleId].model})`;
    }
    return undefined;
  };
  const labeled: TaskCheck = (task) =>
    task.answer === undefined ? 'no answer; evaluation needs one per task' : fits(task);
  const sets = await loadTaskSets(c, plan.family, { train: fits, eval: labeled });
  checkJudges(c, plan, sets.train, warn);
  for (const p of c.phases ?? []) {
    for (const r of p.roles)
      if (c.roles[r]?.train === false)
        warn(`warning: phases name role '${r}', which has train: false and never trains`);
  }
  const evaluators = buildEvaluators(c, plan, sets.evalSet, () => fits);
  if (evaluators.length === 0) warn('warning: nothing is evaluated (no tasks.eval and no evaluators)');
  // an evaluator's prompts leave the training set, as tasks.eval's do (TTRL's one-file setting aside)
  const sameFile =
    c.tasks.train.source === 'file' && c.tasks.eval?.source === 'file' && c.tasks.train.path === c.tasks.eval.path;
  const held = new Set(evaluators.flatMap((e) => (sameFile && e.name === '' ? [] : (e.heldOutPrompts?.() ?? []))));
  const train = sets.train.filter((t) => !held.has(t.prompt));
  if (sets.train.length > 0 && train.length === 0)
    throw new Error('tasks.train: every training task is also scored by an evaluator');
  return { ...sets, train, evaluators };
}

interface Reader {
  tokenizer: Tokenizer;
  context: number;
}

/** The tokenizer and context of each model, from its checkpoint (checked whole) or its fresh config. */
async function modelReaders(c: ExperimentConfig, plan: Plan): Promise<Record<string, Reader>> {
  const out: Record<string, Reader> = {};
  for (const [id, spec] of Object.entries(c.models)) {
    if (spec.kind === 'mlp') {
      if (!plan.arena.features)
        throw new Error(
          `models.${id}: kind 'mlp' reads feature vectors, and arena '${c.arena.kind}' gives text only (a game arena gives numbers)`,
        );
      if (spec.checkpoint && !existsSync(spec.checkpoint))
        throw new Error(`models.${id}.checkpoint: ${spec.checkpoint} does not exist`);
      out[id] = { tokenizer: new CharTokenizer(), context: Infinity }; // it reads numbers: no text to fit
      continue;
    }
    if (spec.kind === 'remote') {
      // the endpoint must answer and serve the model; it checks its own context per request
      const tokenizer = new CharTokenizer();
      await new RemoteServer(id, spec.remote!, tokenizer).check();
      out[id] = { tokenizer, context: Infinity };
      continue;
    }
    if (spec.kind === 'hf') {
      out[id] = hfReader(id, spec.path!, spec.adapter);
      continue;
    }
    if (!spec.checkpoint) {
      const tokenizer = new CharTokenizer();
      out[id] = { tokenizer, context: freshConfig(c, id, tokenizer).context };
      continue;
    }
    if (!existsSync(spec.checkpoint))
      throw new Error(`models.${id}.checkpoint: ${spec.checkpoint} does not exist; ${howToMake(spec.checkpoint)}`);
    try {
      const { json } = await verifyCheckpoint(spec.checkpoint);
      const t = json.userDefinedMetadata?.tokenizer;
      out[id] = {
        tokenizer: t ? CharTokenizer.fromSpec(t) : new CharTokenizer(),
        context: json.modelTopology?.config?.context,
      };
    } catch (e) {
      throw new Error(`models.${id}.checkpoint: ${(e as Error).message}`);
    }
  }
  return out;
}

/** A Hugging Face model's tokenizer and context, its config, tokenizer and adapter checked before any weight is read. */
function hfReader(id: string, path: string, adapter?: string): Reader {
  if (adapter && !existsSync(join(adapter, 'adapter_config.json')))
    throw new Error(`models.${id}.adapter: ${adapter} has no adapter_config.json (a PEFT adapter directory)`);
  try {
    if (!existsSync(path)) throw new Error(`${path} does not exist`);
    return { tokenizer: loadHfTokenizer(path), context: readHfConfig(path).maxPositions };
  } catch (e) {
    throw new Error(`models.${id}.path: ${(e as Error).message}`);
  }
}

/** Why `text`, as a prompt of `role` (its chat form when the model has a template), cannot be read by a model, or undefined. */
function fitsModel(
  text: string,
  role: Pick<Role, 'kind' | 'token' | 'instructions'>,
  system: string | undefined,
  r: Reader,
  maxNewTokens: number,
): string | undefined {
  let length: number;
  try {
    length = rolePrompt(r.tokenizer, role, text, system).length;
  } catch (e) {
    return (e as Error).message;
  }
  if (length + maxNewTokens > r.context) {
    return `the prompt is ${length} tokens and maxNewTokens ${maxNewTokens} more (the role's, else the arena's), beyond the model's context of ${r.context}`;
  }
  return undefined;
}

/** A judge that can reward no turn is a config mistake, found here rather than as a run of zeros. */
function checkJudges(c: ExperimentConfig, plan: Plan, train: readonly Task[], warn: (line: string) => void): void {
  const played = Object.keys(plan.arena.roles);
  const unlabeled = train.filter((t) => t.answer === undefined).length;
  plan.judges.forEach(({ judge, kind }, i) => {
    const rewarded = [...judge.roles].filter((r) => played.includes(r));
    if (rewarded.length === 0) {
      throw new Error(
        `judges.${i} (${kind}): rewards role ${[...judge.roles].join(', ')}, which arena '${c.arena.kind}' does not play (it plays ${played.join(', ')}); it would abstain on every turn`,
      );
    }
    if (!judge.needsAnswer || unlabeled === 0) return;
    if (unlabeled === train.length) {
      throw new Error(
        `judges.${i} (${kind}): needs answers, and none of the ${train.length} training tasks has one; it would abstain on every turn (label-free runs use a judge such as 'majority')`,
      );
    }
    warn(
      `warning: judges.${i} (${kind}) abstains on ${unlabeled} of ${train.length} training tasks, which have no answer`,
    );
  });
}
