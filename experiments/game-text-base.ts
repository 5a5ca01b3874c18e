/**
 * A text base for a game: a TinyLM taught by supervised training to answer every information
 * state's observation, as the player role renders it, with a legal move's code (and end of
 * sequence) drawn from a policy: uniform (`--policy uniform`), or a random mixed policy of
 * its own at each state (`--policy random`, each move's weight uniform in [0.25, 1]). It
 * writes legal moves, which self-play from scratch cannot discover (a fresh model puts 0.0002
 * of its probability on legal moves: no game ever finishes, so no outcome ever differs);
 * SPIRAL starts from an instruction-tuned model for the same reason. A uniform base learns
 * to ignore its prompt (every state has the same answer) and self-play then moved one
 * probability for all states at once; a random policy per state makes the base read it.
 *
 * Still a script rather than a pretrain corpus: the game's text observations and move codes
 * (arenas/game.ts, roles/player.ts) are being reworked as games move into the YAML runtime
 * (issue 41, item 1), and its base (checkpoints/base-kuhn-text) is committed: the tests use it.
 *
 *   npx tsx experiments/game-text-base.ts --game kuhn --out checkpoints/base-kuhn-text [--policy random] [--steps 300] [--dModel 64] [--context 64]
 */
import { initBackend } from '../src/backend/index.js';
import { gameObservation, moveCode } from '../arenas/game.js';
import { exploitability, fromTable } from '../src/games/exploitability.js';
import { gameByName } from '../src/games/index.js';
import { representativeStates } from '../src/games/tabulate.js';
import { textPolicyTable } from '../src/engine/evaluators/exploitability.js';
import { saveModel } from '../src/models/store.js';
import { trainSupervised } from '../src/models/supervised.js';
import { TinyLM } from '../src/models/tinylm.js';
import { PlayerRole } from '../roles/player.js';
import { CharTokenizer } from '../src/tokenizer/index.js';
import { Rng } from '../src/util/rng.js';
import { arg } from './script.js';

const game = gameByName(arg('game', 'kuhn'));
const out = arg('out');
const seed = Number(arg('seed', '1'));
await initBackend('auto');
const tokenizer = new CharTokenizer();
const role = new PlayerRole();
const model = new TinyLM({
  vocabSize: tokenizer.size,
  dModel: Number(arg('dModel', '64')),
  nHeads: 4,
  nLayers: 2,
  context: Number(arg('context', '112')),
  seed,
});
const rng = new Rng(seed);
const states = [...representativeStates(game).values()];
const policyKind = arg('policy', 'random');
if (!['uniform', 'random'].includes(policyKind)) throw new Error(`--policy: uniform or random, got '${policyKind}'`);
// each state's move weights, fixed for the corpus
const weights = states.map(({ state }) =>
  state.legalActions().map(() => (policyKind === 'uniform' ? 1 : 0.25 + 0.75 * rng.next())),
);
const draw = (w: number[]) => {
  let u = rng.next() * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) if ((u -= w[i]) < 0) return i;
  return w.length - 1;
};
const examples = Array.from({ length: Number(arg('examples', '4096')) }, () => {
  const index = rng.int(states.length);
  const { state, player } = states[index];
  const legal = state.legalActions();
  const observation = gameObservation({ id: 'base', family: '', prompt: '' }, game, state);
  const prompt = tokenizer.prompt(role.render({ ...observation }), role.kind);
  return { prompt, completion: [...tokenizer.encode(moveCode(legal[draw(weights[index])])), tokenizer.eos] };
});
const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length));
if (longest > model.config.context)
  throw new Error(`a prompt and its move take ${longest} tokens; --context ${model.config.context} is too short`);
const seats = Array.from({ length: game.numPlayers }, () => ({ role, model }));
trainSupervised(model, examples, {
  steps: Number(arg('steps', '600')),
  batchSize: 64,
  lr: 1e-3,
  seed,
  onStep: (step, loss) => {
    if (step % 50 === 49) {
      const { table, legalMass } = textPolicyTable(game, seats, tokenizer);
      console.log(
        JSON.stringify({
          step: step + 1,
          loss: +loss.toFixed(4),
          legal_mass: +legalMass.toFixed(4),
          exploitability: +exploitability(game, fromTable(table)).toFixed(4),
        }),
      );
    }
  },
});
await saveModel(out, model, tokenizer, {
  game: game.name,
  policy: policyKind,
  made: 'experiments/game-text-base.ts',
});
console.log(`wrote ${out}`);
