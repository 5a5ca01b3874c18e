/**
 * How fast a small TinyLM learns the spy game's odd-letter vote: a civilian shown the other
 * seats' clues names the one seat whose letter its own word lacks (true clues, 4 players, only
 * deals where exactly one seat's letter is odd). Supervised, on the rule's labels: a
 * diagnostic of the vote prompt's form, not a recipe. Prints held-out accuracy (512 fresh
 * prompts, greedy) every 250 steps.
 *
 * `--form list` is the arena's vote prompt (`civ bag vote 0=b 2=a 3=g:`); `beside` writes the
 * voter's word after each clue (`civ bag vote 0=b:bag 2=a:bag 3=g:bag:`), so the letter to
 * look up sits a fixed few places from where it must be found.
 *
 * Measured 2026-12-05 (dModel 64, 2 layers, batch 32, lr 2e-3, seed 1, 20,000 prompts): `list`
 * 0.551 at step 250, 0.873 at 1,000, 0.990 at 2,500 and 1.000 from 2,750 (55 s); `beside` 0.297,
 * 0.801, 1.000 from 2,250. Both forms are learned: the rule is within a 2-layer model's reach
 * when every example shows it.
 *
 *   npx tsx experiments/spy-vote-speed.ts [--form list|beside] [--layers 2] [--steps 3000]
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/backend/index.js';
import { TinyLM } from '../src/models/tinylm.js';
import { CharTokenizer } from '../src/tokenizer/index.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { greedyTexts } from '../src/models/greedy.js';
import { Rng } from '../src/util/rng.js';
import { clueLetters, spyDeal } from '../arenas/spy.js';
import { arg } from './script.js';

await initBackend('wasm');
const form = arg('form', 'list');
const layers = Number(arg('layers', '2'));
const steps = Number(arg('steps', '3000'));
const width = Number(arg('width', '64'));
if (!['list', 'beside'].includes(form)) throw new Error(`--form list or beside, got ${form}`);
const tk = new CharTokenizer();

/** A civilian's vote prompt where exactly one other seat's true clue is not in its word, and that seat. */
function example(rng: Rng): { text: string; label: string } {
  for (;;) {
    const deal = spyDeal(`v-${rng.int(1 << 30)}`, 4);
    const seat = rng.int(4);
    if (seat === deal.spy) continue;
    const clues = deal.words.map((w) => {
      const l = clueLetters(w, 'word');
      return l[rng.int(l.length)];
    });
    const word = deal.words[seat];
    const odd = clues.flatMap((c, i) => (i !== seat && !word.includes(c) ? [i] : []));
    if (odd.length !== 1) continue;
    const shown = clues.flatMap((c, i) => (i === seat ? [] : [form === 'beside' ? `${i}=${c}:${word}` : `${i}=${c}`]));
    return { text: `civ ${word} vote ${shown.join(' ')}:`, label: String(odd[0]) };
  }
}

const rng = new Rng(1);
const train = Array.from({ length: 20000 }, () => example(rng)).map((e) => ({
  prompt: tk.prompt(e.text, 'player'),
  completion: [...tk.encode(e.label), tk.eos],
}));
const held = Array.from({ length: 512 }, () => example(new Rng(1e6 + rng.int(1e6))));
const model = new TinyLM({ vocabSize: tk.size, dModel: width, nHeads: 4, nLayers: layers, context: 64, seed: 1 });
const trainer = new SupervisedTrainer(model, train, { batchSize: 32, lr: 0.002, seed: 1 });
const accuracy = () => {
  const out = greedyTexts(
    model,
    tk,
    held.map((e) => tk.prompt(e.text, 'player')),
    2,
  );
  return out.filter((o, i) => o.trim() === held[i].label).length / held.length;
};
const t0 = Date.now();
for (let s = 1; s <= steps; s++) {
  const loss = trainer.step();
  if (s % 250 === 0)
    console.log(
      `${form} ${layers} layers, step ${s}: loss ${loss.toFixed(3)}, held-out ${accuracy().toFixed(3)}, ${Math.round((Date.now() - t0) / 1000)} s`,
    );
}
trainer.dispose();
tf.dispose(Object.values(model.weights));
