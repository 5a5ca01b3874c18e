/**
 * How well civilians can vote against a given spy, exactly, from the two sides' clue policies
 * (experiments/spy-ceiling.ts measures them from checkpoints). With true clues a voter sees
 * only the other seats' letters, so a spy that gives a letter of the civilians' word cannot be
 * told apart from a civilian: these bound what any vote policy can reach.
 */
import { clueLetters, SPY_GROUPS } from './spy.js';

/** A clue policy for one word: each clue ('?' for an invalid one) with its probability. */
export type CluePolicy = ReadonlyMap<string, number>;
export const INVALID_CLUE = '?';

/** A uniform letter of the word: the arena's `uniform` side with true clues. */
export function uniformClues(word: string): CluePolicy {
  const letters = clueLetters(word, 'word');
  return new Map(letters.map((l) => [l, 1 / letters.length]));
}

/** The spy's clue policy as civilians holding `word` meet it: the spy's word is one of the other three of the group, each alike (spyDeal). */
export function spyMix(spy: (word: string) => CluePolicy, word: string): CluePolicy {
  const group = SPY_GROUPS.find((g) => (g as readonly string[]).includes(word));
  if (!group) throw new Error(`spyMix: '${word}' is not a word of SPY_GROUPS`);
  const others = group.filter((w) => w !== word);
  const mix = new Map<string, number>();
  for (const v of others) for (const [c, p] of spy(v)) mix.set(c, (mix.get(c) ?? 0) + p / others.length);
  return mix;
}

export interface VoteCeilings {
  /** the share of the spy's clues that are letters of the civilians' word */
  blend: number;
  /** the best possible voter given both clue policies: it names the seat most likely the spy */
  bayes: number;
  /** a voter that names the one seat whose letter its word lacks, else votes uniformly */
  rule: number;
  /** the best voter when the civilians all give one letter per word, the best one against this spy */
  team: number;
}

/**
 * The vote accuracies of one civilian voter holding `word`, with 4 players: it sees three other
 * seats, the spy in each with probability 1/3, the two civilians' clues drawn from `civ` and the
 * spy's from `spy` (already mixed over the spy's word: spyMix). Exact: every clue triple is enumerated.
 */
export function voteCeilings(civ: CluePolicy, spy: CluePolicy, word: string): VoteCeilings {
  const symbols = [...new Set([...civ.keys(), ...spy.keys()])];
  const odd = (c: string) => c !== INVALID_CLUE && !word.includes(c);
  let bayes = 0;
  let rule = 0;
  for (const a of symbols)
    for (const b of symbols)
      for (const c of symbols) {
        const seen = [a, b, c];
        // the probability of these clues with the spy in seat s
        const joint = [0, 1, 2].map((s) => seen.reduce((p, x, t) => p * ((t === s ? spy : civ).get(x) ?? 0), 1) / 3);
        bayes += Math.max(...joint);
        const odds = [0, 1, 2].filter((t) => odd(seen[t]));
        joint.forEach((p, s) => (rule += p * (odds.length === 1 ? (odds[0] === s ? 1 : 0) : 1 / 3)));
      }
  let blend = 0;
  for (const [c, p] of spy) if (c !== INVALID_CLUE && word.includes(c)) blend += p;
  // two civilians giving letter l and the spy another tell it apart; the spy saying l too leaves 1/3
  const team = Math.max(...clueLetters(word, 'word').map((l) => 1 - (2 / 3) * (spy.get(l) ?? 0)));
  return { blend, bayes, rule, team };
}

/** voteCeilings averaged over every civilians' word (each alike, as spyDeal deals them). */
export function meanVoteCeilings(civ: (word: string) => CluePolicy, spy: (word: string) => CluePolicy): VoteCeilings {
  const words = SPY_GROUPS.flat();
  const sum: VoteCeilings = { blend: 0, bayes: 0, rule: 0, team: 0 };
  for (const w of words) {
    const v = voteCeilings(civ(w), spyMix(spy, w), w);
    for (const k of Object.keys(sum) as (keyof VoteCeilings)[]) sum[k] += v[k] / words.length;
  }
  return sum;
}
