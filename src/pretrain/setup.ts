/**
 * What a pretrain trains, built from its config alone: the model (a new TinyLM, a new Hugging
 * Face model, or `init:`'s, either kind), its tokenizer, and the supervised examples. A resume builds the same
 * again and then loads the checkpoint's weights into it (state.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHfModel } from '../models/hf/create.js';
import { readHfConfig } from '../models/hf/config.js';
import { HfCausalLM } from '../models/hf/model.js';
import { readCheckpointTensors } from '../models/hf/safetensors.js';
import { HfPolicy } from '../models/hf/policy.js';
import { roleTokenizer } from '../models/hf/text.js';
import { loadModel } from '../models/store.js';
import { TinyLM } from '../models/tinylm.js';
import type { PolicyInput } from '../models/types.js';
import { readTasksJsonl } from '../tasks/jsonl.js';
import type { TaskFamily } from '../core/task-family.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { Rng } from '../util/rng.js';
import type { Tokenizer } from '../tokenizer/types.js';
import { trainingExamples, type PretrainCorpus } from './corpus.js';
import { ROLE_CORPORA } from '../registry.js';
import { bankCorpus, criticTasks, roleCorpus, type RoleProbes } from './corpora/role.js';
import type { TrainedBase } from './save.js';
import type { PretrainConfig } from './schema.js';

/** The model being trained, its tokenizer, and how it is written as a base. */
export interface Trainee {
  model: TinyLM | HfPolicy;
  tokenizer: Tokenizer;
  base: TrainedBase;
}

/** The model of `config` as training starts: seeded from `seed`, or `init:`'s weights. */
export async function buildModel(config: PretrainConfig): Promise<Trainee> {
  if (config.architecture) {
    const made = createHfModel(config.architecture, config.seed);
    if (config.init) made.model = initialHfModel(config.init, made.model);
    return {
      model: new HfPolicy(made.model),
      tokenizer: roleTokenizer(made.tokenizer, config.architecture.tokenizer),
      base: { kind: 'hf', model: made.model, raw: made.raw, tokenizerFrom: config.architecture.tokenizer },
    };
  }
  const { model, tokenizer } = config.init
    ? await initialModel(config)
    : {
        model: new TinyLM({ ...config.model!, vocabSize: new CharTokenizer().size, seed: config.seed }),
        tokenizer: new CharTokenizer(),
      };
  return { model, tokenizer, base: { kind: 'tinylm', model, tokenizer } };
}

/**
 * The supervised examples and the probes a role base is measured on: the judge corpus (from
 * `init:`'s own answers), a critic, memory or game corpus, or the solver, proposer and verdict
 * examples of the task corpus; and beside them the five-roles manager's (`bank:`).
 */
export async function buildExamples(
  config: PretrainConfig,
  t: Trainee,
  family: TaskFamily<unknown>,
  corpus: PretrainCorpus,
  log: (line: string) => void,
): Promise<{ examples: PolicyInput[]; probes: RoleProbes }> {
  const own = await roleExamples(config, t, family, corpus, log);
  if (!config.bank) return own;
  const bank = bankCorpus(config, config.bank, t.tokenizer, corpus, t.model.maxSequence);
  return { examples: [...own.examples, ...bank.examples], probes: { ...own.probes, ...bank.probes } };
}

async function roleExamples(
  config: PretrainConfig,
  t: Trainee,
  family: TaskFamily<unknown>,
  corpus: PretrainCorpus,
  log: (line: string) => void,
): Promise<{ examples: PolicyInput[]; probes: RoleProbes }> {
  if (config.judge)
    return {
      examples: ROLE_CORPORA.judge.examples(
        t.model as TinyLM,
        t.tokenizer as CharTokenizer,
        readTasksJsonl(config.judge.tasks, family.name),
        config.judge,
        config.seed,
      ),
      probes: {},
    };
  if (config.critic?.share !== undefined) {
    // a base that solves and criticises: the tasks the critic is not shown stay solver examples
    const role = await roleCorpus(config, t.model, t.tokenizer, corpus, log);
    const solved = { ...corpus, train: corpus.train.slice(criticTasks(config, corpus.train).length) };
    return { examples: [...trainingExamples(solved, t.tokenizer, family), ...role.examples], probes: role.probes };
  }
  if (config.critic || config.memory || config.game || config.spy || config.flow)
    return roleCorpus(config, t.model, t.tokenizer, corpus, log);
  const solving = trainingExamples(corpus, t.tokenizer, family);
  if (config.observer) {
    const difficulty = family.validate(config.task.difficulty, 'task.difficulty');
    const rng = new Rng(config.seed);
    const o = ROLE_CORPORA.observer.examples(t.tokenizer, family, difficulty, corpus.train, config.observer, rng);
    return {
      examples: config.observer.solving ? [...solving, ...o] : o,
      probes: { observer: { tasks: corpus.test, family, difficulty, corpus: config.observer } },
    };
  }
  return { examples: solving, probes: {} };
}

/**
 * The `init:` checkpoint, checked to have the config's architecture and, for a solver corpus,
 * the default tokenizer. A judge or critic base keeps its solver's tokenizer: the role's prompt
 * is rendered in it, as the runs that load the base will.
 */
async function initialModel(config: PretrainConfig): Promise<{ model: TinyLM; tokenizer: CharTokenizer }> {
  const tokenizer = new CharTokenizer();
  const loaded = await loadModel(config.init!);
  if (loaded.kind !== 'tinylm') throw new Error(`init: ${config.init} holds a ${loaded.kind}, not a tinylm`);
  for (const [k, v] of Object.entries(config.model ?? {})) {
    const have = (loaded.model.config as unknown as Record<string, unknown>)[k];
    if (have !== v) throw new Error(`init: ${config.init} has ${k} ${String(have)}, model.${k} says ${v}`);
  }
  if ((config.judge || config.critic) && loaded.tokenizer) return { model: loaded.model, tokenizer: loaded.tokenizer };
  if (JSON.stringify(loaded.tokenizer?.spec) !== JSON.stringify(tokenizer.spec))
    throw new Error(`init: ${config.init} has another tokenizer than the default one pretrain uses`);
  return { model: loaded.model, tokenizer };
}

/**
 * The Hugging Face directory `init` as the model to train on: it must be the model the config's
 * `architecture` makes (the same config.json fields and tokenizer size), so a base that gains a
 * skill keeps the shape its config says; `fresh` (the seeded initialisation) is dropped.
 */
function initialHfModel(init: string, fresh: HfCausalLM): HfCausalLM {
  if (!existsSync(join(init, 'config.json')))
    throw new Error(`init: ${init} is not a Hugging Face directory (no config.json)`);
  const have = readHfConfig(init);
  for (const [k, v] of Object.entries(fresh.config)) {
    const got = (have as unknown as Record<string, unknown>)[k];
    if (JSON.stringify(got) !== JSON.stringify(v))
      throw new Error(`init: ${init} has ${k} ${JSON.stringify(got)}, architecture makes ${JSON.stringify(v)}`);
  }
  fresh.dispose();
  return new HfCausalLM(have, readCheckpointTensors(init), init);
}

/**
 * With `sharedRows`: the model's embedding rows that no example uses (prompt or completion)
 * train as one row from here on (src/models/hf/shared-rows.ts); `fresh` when the model is a new
 * initialisation.
 */
export function shareUnusedRows(
  t: Trainee,
  examples: readonly PolicyInput[],
  fresh: boolean,
  log: (line: string) => void,
) {
  if (t.model.kind !== 'hf') throw new Error('sharedRows: the model is not an architecture model');
  const used = new Set<number>();
  for (const e of examples) for (const id of [...e.prompt, ...e.completion]) used.add(id);
  const split = t.model.base.shareUnusedRows(used, fresh);
  log(
    `sharedRows: the examples use ${used.size} of ${t.model.config.vocabSize} tokens; the head trains ${split.ids.length} rows, ${split.sharing.length} of them as one`,
  );
}
