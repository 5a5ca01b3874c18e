/**
 * The critic, memory and game corpora of `coevolve pretrain` (`critic:`, `memory:`, `game:`), joined to it:
 * each teaches one role's format in place of the solver corpus, from the corpus's training
 * tasks, and is measured on showings of that role made from its held-out tasks.
 */
import type { Task } from '../../core/types.js';
import type { TinyLM } from '../../models/tinylm.js';
import type { PolicyInput } from '../../models/types.js';
import type { CharTokenizer } from '../../tokenizer/index.js';
import { Rng } from '../../util/rng.js';
import { criticAccuracy, criticExamples, showings, type Showing } from './critic.js';
import { memoryExamples, memoryShowings, memoryValidRates, type MemoryShowing } from './memory.js';
import type { BaseEvaluation } from '../evaluate.js';
import type { PretrainConfig } from '../schema.js';
import { gameEvaluation, gameExamples, type GameCorpus } from './game.js';

/** What a critic or memory base is measured on: held-out showings of its role. */
export interface RoleProbes {
  critic?: { slip: Showing[]; random: Showing[] };
  memory?: MemoryShowing[];
  game?: GameCorpus;
}

/**
 * A critic's or memory manager's examples from the training tasks (their random labels drawn
 * from the seed), and its held-out showings from the held-out tasks.
 */
export async function roleCorpus(
  config: PretrainConfig,
  model: TinyLM,
  tokenizer: CharTokenizer,
  corpus: { train: Task[]; test: Task[] },
  log: (line: string) => void,
): Promise<{ examples: PolicyInput[]; probes: RoleProbes }> {
  const rng = new Rng(config.seed);
  if (config.game) {
    const examples = gameExamples(tokenizer, config.game, config.corpus.train, rng, model.config.context);
    return { examples, probes: { game: config.game } };
  }
  if (config.critic) {
    const { examples, dropped } = await criticExamples(
      tokenizer,
      corpus.train,
      config.critic,
      rng,
      model.config.context,
    );
    if (dropped) log(`critic: left out ${dropped} examples longer than the context`);
    const [slip, random] = [
      await showings(corpus.test, config.critic, 'slip'),
      await showings(corpus.test, config.critic, 'random'),
    ];
    return { examples, probes: { critic: { slip, random } } };
  }
  const seen = await memoryShowings(corpus.train, config.memory!, rng);
  const examples = memoryExamples(tokenizer, seen);
  const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
  if (longest > model.config.context)
    throw new Error(`memory: an example takes ${longest} tokens; model.context ${model.config.context} is too short`);
  return { examples, probes: { memory: await memoryShowings(corpus.test, config.memory!, new Rng(config.seed + 1)) } };
}

/** A critic base's held-out verdict accuracy, a memory base's valid outputs, or a game base's legal mass and exploitability; nothing for other bases. */
export function roleEvaluation(
  model: TinyLM,
  tokenizer: CharTokenizer,
  probes: RoleProbes,
  config: PretrainConfig,
  seed: number,
): Pick<BaseEvaluation, 'critic' | 'memory' | 'game'> {
  const { critic, memory, game } = probes;
  return {
    ...(game && { game: gameEvaluation(model, tokenizer, game) }),
    ...(critic && {
      critic: {
        slip: criticAccuracy(model, tokenizer, critic.slip, config.critic!),
        random: criticAccuracy(model, tokenizer, critic.random, config.critic!),
      },
    }),
    ...(memory && { memory: memoryValidRates(model, tokenizer, memory, seed) }),
  };
}
