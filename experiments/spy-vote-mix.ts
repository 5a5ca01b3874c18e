/**
 * Why the spy corpus's `informed` bases did not learn the odd-letter vote that
 * spy-vote-speed.ts learns in 1,000 steps: the same fresh 2-layer, 64-wide TinyLM (batch 32, lr
 * 2e-3, seed 1), trained on the spy corpus (arenas/spy-corpus.ts, true clues) with the options
 * given as JSON, and measured as spy-vote-speed.ts measures (512 fresh odd-letter prompts,
 * greedy) every 250 steps. `--noise s` adds that share of odd-letter prompts labelled with a
 * uniform seat (the rule's own prompts with random targets).
 *
 * `--base DIR` instead measures a saved base on 3,000 fresh prompts, greedy and sampled at
 * temperature 1: the share of its civilians' odd-letter votes that follow the rule, and the
 * share of its clues and votes that are legal.
 *
 *   npx tsx experiments/spy-vote-mix.ts --corpus '{"informed":1}' [--n 40000] [--steps 3000]
 *   npx tsx experiments/spy-vote-mix.ts --corpus '{"oddVotes":0.5}' --steps 1500
 *   npx tsx experiments/spy-vote-mix.ts --base checkpoints/base-spy-informed
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/backend/index.js';
import { generate } from '../src/models/generate.js';
import { TinyLM } from '../src/models/tinylm.js';
import { CharTokenizer } from '../src/tokenizer/index.js';
import { SupervisedTrainer } from '../src/rl/supervised.js';
import { Rng } from '../src/util/rng.js';
import { clueLetters, spyDeal } from '../arenas/spy.js';
import { oddLetterSeat, SpyCorpusSchema, spyExamples } from '../arenas/spy-corpus.js';
import { arg, greedyTexts, loadLanguageModel } from './script.js';

await initBackend('wasm');

/** A seat's prompt on a fresh deal with true clues: its vote (with the odd-letter seat, for a civilian that sees one) or its clue. */
function prompt(rng: Rng, kind: 'vote' | 'clue', oddOnly: boolean): { text: string; legal: string[]; odd?: number } {
  for (;;) {
    const deal = spyDeal(`mix-${rng.int(1 << 30)}`, 4);
    const seat = rng.int(4);
    const tag = seat === deal.spy ? 'spy' : 'civ';
    const word = deal.words[seat];
    if (kind === 'clue') {
      const letters = clueLetters(word, 'word');
      return { text: `${tag} ${word} clue ${letters.map((l) => `${l}=${l}`).join(' ')}:`, legal: letters };
    }
    const clues = deal.words.map((w) => {
      const l = clueLetters(w, 'word');
      return l[rng.int(l.length)];
    });
    const odd = tag === 'civ' ? oddLetterSeat(word, clues, seat) : undefined;
    if (oddOnly && odd === undefined) continue;
    const shown = clues.flatMap((c, i) => (i === seat ? [] : [`${i}=${c}`]));
    const legal = shown.map((s) => s[0]);
    return { text: `${tag} ${word} vote ${shown.join(' ')}:`, legal, odd };
  }
}

const base = arg('base', '');
if (base) {
  const { model, tokenizer: tk } = await loadLanguageModel(base);
  const rng = new Rng(12345);
  const shown = Array.from({ length: 3000 }, (_, i) => prompt(rng, i % 2 ? 'clue' : 'vote', false));
  for (const temperature of [0, 1]) {
    const ids = shown.map((p) => tk.prompt(p.text, 'player'));
    const out: string[] = [];
    for (let k = 0; k < ids.length; k += 256)
      for (const g of generate(model, ids.slice(k, k + 256), { maxNewTokens: 2, temperature, seed: 7, eos: tk.eos }))
        out.push(tk.decode(g.tokens.filter((x) => x !== tk.eos)));
    const share = (keep: (i: number) => boolean, hit: (i: number) => boolean) => {
      const at = shown.flatMap((_, i) => (keep(i) ? [i] : []));
      return `${at.filter(hit).length}/${at.length} = ${(at.filter(hit).length / at.length).toFixed(3)}`;
    };
    const isOdd = (i: number) => shown[i].odd !== undefined;
    console.log(
      `${base}, temperature ${temperature}: odd-letter votes ${share(isOdd, (i) => out[i] === String(shown[i].odd))}; ` +
        `legal clues ${share(
          (i) => i % 2 === 1,
          (i) => shown[i].legal.includes(out[i]),
        )}; ` +
        `legal votes ${share(
          (i) => i % 2 === 0,
          (i) => shown[i].legal.includes(out[i]),
        )}`,
    );
  }
} else {
  const corpus = SpyCorpusSchema.parse({ clues: 'word', ...(JSON.parse(arg('corpus', '{}')) as object) });
  const n = Number(arg('n', '40000'));
  const steps = Number(arg('steps', '3000'));
  const noise = Number(arg('noise', '0'));
  const tk = new CharTokenizer();
  const rng = new Rng(7);
  const noisy = Array.from({ length: Math.round(n * noise) }, () => {
    const p = prompt(rng, 'vote', true);
    return { prompt: tk.prompt(p.text, 'player'), completion: [...tk.encode(p.legal[rng.int(3)]), tk.eos] };
  });
  const train = [...spyExamples(tk, corpus, n - noisy.length, rng, 64), ...noisy];
  const held = Array.from({ length: 512 }, () => prompt(rng, 'vote', true));
  const model = new TinyLM({ vocabSize: tk.size, dModel: 64, nHeads: 4, nLayers: 2, context: 64, seed: 1 });
  const trainer = new SupervisedTrainer(model, train, { batchSize: 32, lr: 0.002, seed: 1 });
  const prompts = held.map((e) => tk.prompt(e.text, 'player'));
  const t0 = Date.now();
  let loss = 0;
  for (let s = 1; s <= steps; s++) {
    loss += trainer.step();
    if (s % 250 === 0) {
      const right = greedyTexts(model, tk, prompts, 2).filter((o, i) => o.trim() === String(held[i].odd)).length;
      console.log(
        `${JSON.stringify(corpus)} noise ${noise}, step ${s}: loss ${(loss / 250).toFixed(3)}, odd-letter held-out ${(right / held.length).toFixed(3)}, ${Math.round((Date.now() - t0) / 1000)} s`,
      );
      loss = 0;
    }
  }
  trainer.dispose();
  tf.dispose(Object.values(model.weights));
}
