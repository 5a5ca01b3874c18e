/**
 * A text base for a game: a TinyLM taught by supervised training to answer every information
 * state's observation, as the player role renders it, with a legal move's code drawn
 * uniformly (and end of sequence). It plays the uniform policy and writes legal moves, which
 * self-play from scratch cannot discover (a fresh model puts 0.0002 of its probability on
 * legal moves: no game ever finishes, so no outcome ever differs). SPIRAL starts from an
 * instruction-tuned model for the same reason.
 *
 *   npx tsx src/experiments/game-text-base.ts --game kuhn --out checkpoints/base-kuhn-text [--steps 300] [--dModel 64] [--context 112]
 */
import { initBackend } from '../backend/index.js';
import { moveCode, type GameObservation } from '../../arenas/game.js';
import { exploitability, fromTable } from '../games/exploitability.js';
import { gameByName } from '../games/index.js';
import { representativeStates } from '../games/tabulate.js';
import { textPolicyTable } from '../engine/evaluators/exploitability.js';
import { saveModel } from '../models/store.js';
import { trainSupervised } from '../models/supervised.js';
import { TinyLM } from '../models/tinylm.js';
import { PlayerRole } from '../../roles/player.js';
import { CharTokenizer } from '../tokenizer/index.js';
import { Rng } from '../util/rng.js';

const arg = (name: string, fallback?: string) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i > 0) return process.argv[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
};
const game = gameByName(arg('game', 'kuhn'));
const out = arg('out');
const seed = Number(arg('seed', '1'));
await initBackend('auto');
const tokenizer = new CharTokenizer();
const role = new PlayerRole();
const model = new TinyLM({ vocabSize: tokenizer.size, dModel: Number(arg('dModel', '64')), nHeads: 4, nLayers: 2, context: Number(arg('context', '112')), seed });
const rng = new Rng(seed);
const states = [...representativeStates(game).values()];
const examples = Array.from({ length: Number(arg('examples', '4096')) }, () => {
  const { state, player } = states[rng.int(states.length)];
  const legal = state.legalActions();
  const observation: GameObservation = { task: { id: 'base', family: '', prompt: '' }, text: state.observationText(player), legal: legal.map((a) => ({ code: moveCode(a), name: state.actionName(a) })) };
  const prompt = tokenizer.prompt(role.render({ ...observation }), role.kind);
  return { prompt, completion: [...tokenizer.encode(moveCode(legal[rng.int(legal.length)])), tokenizer.eos] };
});
const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length));
if (longest > model.config.context) throw new Error(`a prompt and its move take ${longest} tokens; --context ${model.config.context} is too short`);
const seats = Array.from({ length: game.numPlayers }, () => ({ role, model }));
trainSupervised(model, examples, {
  steps: Number(arg('steps', '300')), batchSize: 64, lr: 1e-3, seed,
  onStep: (step, loss) => {
    if (step % 50 === 49) {
      const { table, legalMass } = textPolicyTable(game, seats, tokenizer);
      console.log(JSON.stringify({ step: step + 1, loss: +loss.toFixed(4), legal_mass: +legalMass.toFixed(4), exploitability: +exploitability(game, fromTable(table)).toFixed(4) }));
    }
  },
});
await saveModel(out, model, tokenizer, { game: game.name, made: 'src/experiments/game-text-base.ts' });
console.log(`wrote ${out}`);
