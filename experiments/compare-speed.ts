/**
 * How fast a small TinyLM learns the comparison a solve-first judge makes: `own|shown?` -> y when
 * the shown answer is its own, n when it is a one-digit slip of it (numbers 20 to 198, as the
 * sums of two 2-digit numbers). Supervised, on the right labels: a diagnostic of the model, not
 * a recipe. Prints held-out accuracy (512 fresh pairs, greedy) every 250 steps, and at the end
 * the accuracy on right answers and on slips by the digit slipped.
 *
 * `--form var` shows the numbers as they are (the matching digit 3 or 4 places back); `fixed`
 * right-aligns both to 3 characters (always 4 places back); `mix` makes half the training
 * slips another number instead (as the judge corpora's wrong answers are), held out on slips.
 *
 * Measured 2026-12-05 (dModel 64, batch 32, lr 2e-3, seed 1, a shared machine): 2 layers, var:
 * 0.60 to 0.67 until step 1,750, then 0.75, 0.83 and 0.85 to 0.88 from step 2,500; fixed:
 * the same jump, to 0.78 to 0.82; mix: 0.77 at 4,000; 4 layers, var: 0.65 at step 250, 0.83
 * at 750, then 0.82 to 0.88 up to step 6,000.
 *
 *   npx tsx experiments/compare-speed.ts [--form var|fixed|mix] [--layers 2] [--steps 4000]
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/backend/index.js';
import { TinyLM } from '../src/models/tinylm.js';
import { CharTokenizer } from '../src/tokenizer/index.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { greedyTexts } from '../src/models/greedy.js';
import { Rng } from '../src/util/rng.js';
import { arg } from './script.js';

await initBackend('wasm');
const form = arg('form', 'var');
const layers = Number(arg('layers', '2'));
const steps = Number(arg('steps', '4000'));
if (!['var', 'fixed', 'mix'].includes(form)) throw new Error(`--form var, fixed or mix, got ${form}`);
const tk = new CharTokenizer();

/** `s` with one digit changed (never a leading zero), and which digit from the right. */
function slip(s: string, rng: Rng): { text: string; place: number } {
  for (;;) {
    const i = rng.int(s.length);
    const d = String(rng.int(10));
    if (d !== s[i] && !(i === 0 && d === '0')) return { text: s.slice(0, i) + d + s.slice(i + 1), place: s.length - i };
  }
}
const show = (n: string) => (form === 'fixed' ? n.padStart(3, ' ') : n);
function example(rng: Rng, heldOut = false) {
  const own = String(20 + rng.int(179));
  if (rng.next() < 0.5) return { text: `${show(own)}|${show(own)}?`, label: 'y', kind: 'right' };
  if (form === 'mix' && !heldOut && rng.next() < 0.5)
    return { text: `${show(own)}|${show(String(20 + rng.int(179)))}?`, label: 'n', kind: 'far' };
  const s = slip(own, rng);
  return { text: `${show(own)}|${show(s.text)}?`, label: 'n', kind: `slip ${s.place} of ${own.length}` };
}

const rng = new Rng(1);
const train = Array.from({ length: 20000 }, () => example(rng)).map((e) => ({
  prompt: tk.prompt(e.text, 'solver'),
  completion: [...tk.encode(e.label), tk.eos],
}));
const held = Array.from({ length: 512 }, () => example(new Rng(1e6 + rng.int(1e6)), true));
const model = new TinyLM({ vocabSize: tk.size, dModel: 64, nHeads: 4, nLayers: layers, context: 16, seed: 1 });
const trainer = new SupervisedTrainer(model, train, { batchSize: 32, lr: 0.002, seed: 1 });
const verdicts = () =>
  greedyTexts(
    model,
    tk,
    held.map((e) => tk.prompt(e.text, 'solver')),
    2,
  ).map((o, i) => (o.trim() === held[i].label ? 1 : 0));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const t0 = Date.now();
let said = t0;
for (let s = 1; s <= steps; s++) {
  const loss = trainer.step();
  // a line at least every 30 s between the measures, with the time left
  if (Date.now() - said > 30_000 && s % 250 !== 0) {
    said = Date.now();
    const left = ((said - t0) / s) * (steps - s);
    console.log(`step ${s}/${steps}, about ${Math.round(left / 1000)} s left`);
  }
  if (s % 250 === 0) {
    said = Date.now();
    console.log(
      `${form} ${layers} layers, step ${s}: loss ${loss.toFixed(3)}, held-out ${mean(verdicts()).toFixed(3)}`,
    );
  }
}
const right = verdicts();
for (const kind of [...new Set(held.map((e) => e.kind))].sort())
  console.log(
    `${kind}: ${mean(right.filter((_, i) => held[i].kind === kind)).toFixed(3)} of ${held.filter((e) => e.kind === kind).length}`,
  );
trainer.dispose();
tf.dispose(Object.values(model.weights));
