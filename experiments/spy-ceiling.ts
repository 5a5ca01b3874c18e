/**
 * How well can the civilians vote against a given spy? Measures each side's clue policy from a
 * checkpoint (sampled at temperature 1, as the arena and its evaluator play) or `uniform`, and
 * prints the exact vote-accuracy ceilings of arenas/spy-ceiling.ts: `blend` (the spy's clues
 * that are letters of the civilians' word), `bayes` (the best possible voter given both clue
 * policies), `rule` (the odd-letter vote, else uniform) and `team` (the best voter when the
 * civilians also agree on one letter per word against this spy). 4 players, true clues.
 *
 *   npx tsx experiments/spy-ceiling.ts --civ checkpoints/base-spy-informed --spy checkpoints/base-spy-informed
 *   npx tsx experiments/spy-ceiling.ts --civ runs/spy-informed/big-s1/checkpoints/<it> --spy uniform
 */
import { initBackend } from '../src/backend/index.js';
import { generate } from '../src/models/generate.js';
import { clueLetters, SPY_GROUPS } from '../arenas/spy.js';
import { INVALID_CLUE, meanVoteCeilings, uniformClues, type CluePolicy } from '../arenas/spy-ceiling.js';
import { arg, loadLanguageModel } from './script.js';

await initBackend('wasm');

/** Each word's clue policy for a seat tagged `tag`: `uniform`, or a checkpoint sampled `samples` times a word. */
async function cluePolicies(source: string, tag: 'civ' | 'spy', samples: number): Promise<(w: string) => CluePolicy> {
  if (source === 'uniform') return uniformClues;
  const { model, tokenizer: tk } = await loadLanguageModel(source);
  const out = new Map<string, CluePolicy>();
  for (const w of SPY_GROUPS.flat()) {
    const legal = clueLetters(w, 'word');
    const ids = Array.from({ length: samples }, () =>
      tk.prompt(`${tag} ${w} clue ${legal.map((l) => `${l}=${l}`).join(' ')}:`, 'player'),
    );
    const p = new Map<string, number>();
    for (const g of generate(model, ids, { maxNewTokens: 2, temperature: 1, seed: 11, eos: tk.eos })) {
      const said = tk.decode(g.tokens.filter((x) => x !== tk.eos));
      const c = legal.includes(said) ? said : INVALID_CLUE;
      p.set(c, (p.get(c) ?? 0) + 1 / samples);
    }
    out.set(w, p);
  }
  return (w) => out.get(w)!;
}

const samples = Number(arg('samples', '2000'));
const civ = arg('civ');
const spy = arg('spy');
const c = meanVoteCeilings(await cluePolicies(civ, 'civ', samples), await cluePolicies(spy, 'spy', samples));
console.log(
  `civilians ${civ}, spy ${spy} (${samples} clues a word): spy blends ${c.blend.toFixed(3)}; vote accuracy ceilings: ` +
    `bayes ${c.bayes.toFixed(3)}, rule ${c.rule.toFixed(3)}, team ${c.team.toFixed(3)} (a uniform vote 0.333)`,
);
