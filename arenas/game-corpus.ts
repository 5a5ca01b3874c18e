/**
 * A game's text base (`game:` in a pretrain config): a language model taught to answer every
 * information state's observation, as the player role renders it, with a legal move's code and
 * the end of sequence. Self-play from scratch cannot discover legal moves (a fresh model puts
 * 0.0002 of its probability on them, so no game finishes and no outcome differs); SPIRAL starts
 * from an instruction-tuned model for the same reason. The moves are drawn from a policy:
 * `uniform`, or `random`, a mixed policy of its own at each state (each move's weight uniform in
 * [0.25, 1]). A uniform base learns to ignore its prompt (every state has the same answer), and
 * self-play then moved one probability for all states at once; a random policy per state makes
 * the base read it. Measured by the legal mass of its table and its exploitability.
 */
import { z } from 'zod';
import { GAMES, gameByName } from '../src/games/index.js';
import { gameObservation, moveCode } from '../src/core/game-text.js';
import { exploitability, fromTable } from '../src/games/exploitability.js';
import { representativeStates } from '../src/games/tabulate.js';
import { PlayerRole } from '../roles/player.js';
import type { TinyLM } from '../src/models/tinylm.js';
import type { PolicyInput } from '../src/models/types.js';
import type { CharTokenizer } from '../src/tokenizer/index.js';
import type { Rng } from '../src/util/rng.js';
import { textPolicyTable } from '../src/engine/evaluators/exploitability.js';

export const GameCorpusSchema = z.strictObject({
  game: z.enum(Object.keys(GAMES) as [string, ...string[]]), // the game whose moves are taught
  policy: z.enum(['random', 'uniform']).default('random'), // the moves' policy (above)
});
export type GameCorpus = z.output<typeof GameCorpusSchema>;

/** `n` examples: a state drawn uniformly from every player's information states, and a move from its policy. */
export function gameExamples(
  tokenizer: CharTokenizer,
  o: GameCorpus,
  n: number,
  rng: Rng,
  context: number,
): PolicyInput[] {
  const game = gameByName(o.game);
  const role = new PlayerRole();
  const states = [...representativeStates(game).values()];
  // each state's move weights, fixed for the corpus
  const weights = states.map(({ state }) =>
    state.legalActions().map(() => (o.policy === 'uniform' ? 1 : 0.25 + 0.75 * rng.next())),
  );
  const draw = (w: number[]) => {
    let u = rng.next() * w.reduce((a, b) => a + b, 0);
    for (let i = 0; i < w.length; i++) if ((u -= w[i]) < 0) return i;
    return w.length - 1;
  };
  const examples = Array.from({ length: n }, () => {
    const index = rng.int(states.length);
    const { state } = states[index];
    const observation = gameObservation({ id: 'base', family: '', prompt: '' }, game, state);
    const prompt = tokenizer.prompt(role.render({ ...observation }), role.kind);
    const move = state.legalActions()[draw(weights[index])];
    return { prompt, completion: [...tokenizer.encode(moveCode(move)), tokenizer.eos] };
  });
  const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
  if (longest > context)
    throw new Error(`game: a prompt and its move take ${longest} tokens; model.context ${context} is too short`);
  return examples;
}

/** The base's table over every information state (each seat on it): the mass it puts on legal moves, and the table's exploitability. */
export function gameEvaluation(
  model: TinyLM,
  tokenizer: CharTokenizer,
  o: GameCorpus,
): { legalMass: number; exploitability: number } {
  const game = gameByName(o.game);
  const role = new PlayerRole();
  const seats = Array.from({ length: game.numPlayers }, () => ({ role, model }));
  const { table, legalMass } = textPolicyTable(game, seats, tokenizer);
  return { legalMass, exploitability: exploitability(game, fromTable(table)) };
}
