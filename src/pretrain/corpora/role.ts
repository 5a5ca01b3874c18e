/**
 * The critic, memory and game corpora of `coevolve pretrain` (`critic:`, `memory:`, `game:`), joined to it:
 * each teaches one role's format in place of the solver corpus, from the corpus's training
 * tasks, and is measured on showings of that role made from its held-out tasks. The critic's
 * and memory's go through the role's prompt and greedy generation, so a TinyLM and a Hugging
 * Face model (its chat template) are taught alike; the game's reads a TinyLM's table.
 */
import type { Task } from '../../core/types.js';
import type { TaskFamily } from '../../core/task-family.js';
import type { LanguageModel } from '../../models/generate.js';
import type { TinyLM } from '../../models/tinylm.js';
import type { PolicyInput } from '../../models/types.js';
import type { CharTokenizer } from '../../tokenizer/index.js';
import type { Tokenizer } from '../../tokenizer/types.js';
import { Rng } from '../../util/rng.js';
import type { PretrainConfig } from '../schema.js';
import {
  ROLE_CORPORA,
  type CriticShowing as Showing,
  type FlowShowing,
  type GameCorpus,
  type MemoryRates,
  type MemoryShowing,
  type BankShowing,
  type BankCorpus,
  type ObserverCopies,
  type ObserverCorpus,
} from '../../registry.js';

const {
  critic: criticCorpus,
  memory: memoryCorpus,
  game: gameCorpus,
  spy: spyCorpus,
  flow: flowCorpus,
  observer: observerCorpus,
} = ROLE_CORPORA;

/** A role base's own measures (part of a base's evaluation, src/pretrain/evaluate.ts). */
export interface RoleEvaluation {
  /** a critic base: greedy verdict (and check) accuracy on held-out carry slips and random errors */
  critic?: Record<'slip' | 'random', { verdict: number; check?: number }>;
  /** a memory base: the share of sampled outputs that parse, per role, on the held-out dialogues, and that the rules would write */
  memory?: MemoryRates;
  /** a game base: the mass its table puts on legal moves, and the table's exploitability */
  game?: { legalMass: number; exploitability: number };
  /** a planner base: the share of sampled steps that add two numbers its memory holds, on the held-out sums */
  flow?: number;
  /** an observer base: the share of greedy hints on held-out views that copy a shown sum, and the marked one */
  observer?: ObserverCopies;
  /** a five-roles base: the share of right greedy manager operations on held-out showings */
  bank?: number;
}

/** What a critic or memory base is measured on: held-out showings of its role. */
export interface RoleProbes {
  critic?: { slip: Showing[]; random: Showing[] };
  memory?: MemoryShowing[];
  game?: GameCorpus;
  flow?: FlowShowing[];
  /** the held-out tasks an observer base's views are made from, at the corpus's difficulty */
  observer?: { tasks: Task[]; family: TaskFamily<unknown>; difficulty: unknown; corpus: ObserverCorpus };
  bank?: BankShowing[];
}

/** The five-roles manager's examples beside the other examples of a base (`bank:`), and its held-out showings. */
export function bankCorpus(
  config: PretrainConfig,
  bank: BankCorpus,
  tokenizer: Tokenizer,
  corpus: { train: Task[]; test: Task[] },
  context: number,
): { examples: PolicyInput[]; probes: RoleProbes } {
  const rng = new Rng(config.seed + 2); // its own stream: the other corpora draw as they did
  const n = Math.round(bank.share * config.corpus.train);
  const tasks = Array.from({ length: n }, (_, i) => corpus.train[i % corpus.train.length]);
  const examples = ROLE_CORPORA.bank.examples(
    tokenizer,
    ROLE_CORPORA.bank.showings(tasks, bank, rng, corpus.train),
    bank,
  );
  const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
  if (longest > context)
    throw new Error(`bank: an example takes ${longest} tokens; the model's context ${context} is too short`);
  return { examples, probes: { bank: ROLE_CORPORA.bank.showings(corpus.test, bank, new Rng(config.seed + 3)) } };
}

/**
 * A critic's or memory manager's examples from the training tasks (their random labels drawn
 * from the seed), and its held-out showings from the held-out tasks.
 */
export async function roleCorpus(
  config: PretrainConfig,
  model: LanguageModel,
  tokenizer: Tokenizer,
  corpus: { train: Task[]; test: Task[] },
  log: (line: string) => void,
): Promise<{ examples: PolicyInput[]; probes: RoleProbes }> {
  const rng = new Rng(config.seed);
  const context = model.maxSequence;
  if (config.game) {
    const examples = gameCorpus.examples(tokenizer as CharTokenizer, config.game, config.corpus.train, rng, context);
    return { examples, probes: { game: config.game } };
  }
  if (config.spy)
    return {
      examples: spyCorpus.examples(tokenizer as CharTokenizer, config.spy, config.corpus.train, rng, context),
      probes: {},
    };
  if (config.flow) {
    const examples = flowCorpus.examples(
      tokenizer as CharTokenizer,
      await flowCorpus.showings(corpus.train, config.flow, rng),
    );
    const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
    if (longest > context)
      throw new Error(`flow: an example takes ${longest} tokens; the model's context ${context} is too short`);
    return {
      examples,
      probes: { flow: await flowCorpus.showings(corpus.test, config.flow, new Rng(config.seed + 1)) },
    };
  }
  if (config.critic) {
    const { examples, dropped } = await criticCorpus.examples(
      tokenizer,
      criticTasks(config, corpus.train),
      config.critic,
      rng,
      context,
    );
    if (dropped) log(`critic: left out ${dropped} examples longer than the context`);
    const [slip, random] = [
      await criticCorpus.showings(corpus.test, config.critic, 'slip'),
      await criticCorpus.showings(corpus.test, config.critic, 'random'),
    ];
    return { examples, probes: { critic: { slip, random } } };
  }
  const seen = await memoryCorpus.showings(corpus.train, config.memory!, rng);
  const examples = memoryCorpus.examples(tokenizer, seen);
  const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
  if (longest > context)
    throw new Error(`memory: an example takes ${longest} tokens; the model's context ${context} is too short`);
  return {
    examples,
    probes: { memory: await memoryCorpus.showings(corpus.test, config.memory!, new Rng(config.seed + 1)) },
  };
}

/** The training tasks the critic is shown: the first `critic.share` of them (the rest are solved), or all. */
export function criticTasks(config: PretrainConfig, train: Task[]): Task[] {
  const share = config.critic?.share;
  return share === undefined ? train : train.slice(0, Math.round(share * train.length));
}

/** A critic base's held-out verdict accuracy, a memory base's valid outputs, or a game base's legal mass and exploitability; nothing for other bases. */
export function roleEvaluation(
  model: LanguageModel,
  tokenizer: Tokenizer,
  probes: RoleProbes,
  config: PretrainConfig,
  seed: number,
): RoleEvaluation {
  const { critic, memory, game, flow, observer, bank } = probes;
  return {
    ...(bank && config.bank && { bank: ROLE_CORPORA.bank.accuracy(model, tokenizer, bank, config.bank) }),
    ...(observer && {
      observer: observerCorpus.copies(
        model,
        tokenizer,
        observer.family,
        observer.difficulty,
        observer.tasks,
        observer.corpus,
      ),
    }),
    ...(flow && { flow: flowCorpus.validRate(model as TinyLM, tokenizer as CharTokenizer, flow, seed) }),

    ...(game && { game: gameCorpus.evaluate(model as TinyLM, tokenizer as CharTokenizer, game) }),
    ...(critic && {
      critic: {
        slip: criticCorpus.accuracy(model, tokenizer, critic.slip, config.critic!),
        random: criticCorpus.accuracy(model, tokenizer, critic.random, config.critic!),
      },
    }),
    ...(memory && { memory: memoryCorpus.validRates(model, tokenizer, memory, seed) }),
  };
}
