/**
 * The spy game's text base (`spy:` in a pretrain config): a language model taught to answer
 * the spy arena's clue and vote prompts, as the player role renders them, with a legal code
 * and the end of sequence. As for the game corpus (game-corpus.ts), each prompt's moves are
 * drawn from a mixed policy of its own (each legal move's weight uniform in [0.25, 1], fixed
 * by a hash of the prompt and the move), so the base reads its prompt and self-play starts
 * from play that is legal and varied but knows nothing of the game. With `informed` a share
 * of the civilians' votes follow a rule that reads the clues (informedVote): a prior for RL
 * to sharpen, as the observer base's `marked` is. With `oddVotes` that share of all examples are
 * civilians' votes on a deal where exactly one other seat's clue is not a letter of the voter's
 * word, labelled with that seat (the odd-letter vote, oddLetterSeat). `informed` alone does not
 * teach that rule: there it is about one example in twelve, and a 2-layer base shown it among
 * prompts whose targets are random policies does not pick it up in 3,000 steps, nor at one in
 * four; at one in two it does, as fast as on the rule alone (docs/spy.md).
 */
import { z } from 'zod';
import { clueLetters, SpyArena, spyDeal } from './spy.js';
import { PlayerRole } from '../roles/player.js';
import { hashText } from '../src/util/hash.js';
import type { PolicyInput } from '../src/models/types.js';
import type { CharTokenizer } from '../src/tokenizer/index.js';
import type { Rng } from '../src/util/rng.js';

export const SpyCorpusSchema = z.strictObject({
  players: z.number().int().min(3).max(9).default(4), // the arena's `players`
  told: z.boolean().default(true), // the arena's `told`
  clues: z.enum(['any', 'word']).default('any'), // the arena's `clues`
  votes: z.number().min(0).max(1).default(0.5), // the share of examples that are votes (the rest clues)
  informed: z.number().min(0).max(1).default(0), // the share of civilian votes that follow informedVote where it names a seat (the rest the mixed policy)
  oddVotes: z.number().min(0).max(1).default(0), // the share of examples that are odd-letter civilian votes, labelled with the odd seat
});
export type SpyCorpus = z.output<typeof SpyCorpusSchema>;

/** `n` examples: a random deal and seat, its clue or (with random legal clues of the others) its vote prompt, and a move. */
export function spyExamples(
  tokenizer: CharTokenizer,
  o: SpyCorpus,
  n: number,
  rng: Rng,
  context: number,
): PolicyInput[] {
  const arena = new SpyArena({ players: o.players, told: o.told, clues: o.clues });
  const role = new PlayerRole();
  const examples = Array.from({ length: n }, (_, i) => {
    // drawn only when asked for, so a corpus without oddVotes is the one it was before the option
    if (o.oddVotes > 0 && rng.next() < o.oddVotes) return oddVote(tokenizer, arena, role, o, i, rng);
    const task = { id: `spy-base-${i}-${rng.int(1 << 30)}`, family: '', prompt: '' };
    const deal = spyDeal(task.id, o.players);
    const seat = rng.int(o.players);
    const said = (w: string) => {
      const letters = clueLetters(w, o.clues);
      return letters[rng.int(letters.length)];
    };
    const clues = rng.next() < o.votes ? deal.words.map(said) : undefined;
    const observation = arena.observation(task, deal, seat, clues);
    const text = role.render({ ...observation });
    const informed =
      clues && seat !== deal.spy && o.informed > 0 && rng.next() < o.informed
        ? informedVote(deal.words[seat], clues, seat)
        : undefined;
    const w = observation.legal.map((m) => 0.25 + 0.75 * ((hashText(`${text}|${m.code}`) % 1000) / 1000));
    let u = rng.next() * w.reduce((a, b) => a + b, 0);
    const k = w.findIndex((x) => (u -= x) < 0);
    const move = informed !== undefined ? String(informed) : observation.legal[k < 0 ? w.length - 1 : k].code;
    return { prompt: tokenizer.prompt(text, role.kind), completion: [...tokenizer.encode(move), tokenizer.eos] };
  });
  const longest = Math.max(...examples.map((e) => e.prompt.length + e.completion.length - 1));
  if (longest > context)
    throw new Error(`spy: a prompt and its move take ${longest} tokens; model.context ${context} is too short`);
  return examples;
}

/** A civilian's vote where exactly one other seat's clue is not a letter of its word (a fresh deal until one is), and that seat. */
function oddVote(
  tokenizer: CharTokenizer,
  arena: SpyArena,
  role: PlayerRole,
  o: SpyCorpus,
  i: number,
  rng: Rng,
): PolicyInput {
  for (;;) {
    const task = { id: `spy-odd-${i}-${rng.int(1 << 30)}`, family: '', prompt: '' };
    const deal = spyDeal(task.id, o.players);
    const seat = rng.int(o.players);
    const clues = deal.words.map((w) => {
      const letters = clueLetters(w, o.clues);
      return letters[rng.int(letters.length)];
    });
    const odd = oddLetterSeat(deal.words[seat], clues, seat);
    if (seat === deal.spy || odd === undefined) continue;
    const text = role.render({ ...arena.observation(task, deal, seat, clues) });
    return { prompt: tokenizer.prompt(text, role.kind), completion: [...tokenizer.encode(String(odd)), tokenizer.eos] };
  }
}

/** The one other seat whose clue is not a letter of `word`, or undefined when none or several are. */
export function oddLetterSeat(word: string, clues: readonly string[], seat: number): number | undefined {
  const odd = clues.flatMap((c, i) => (i !== seat && !word.includes(c) ? [i] : []));
  return odd.length === 1 ? odd[0] : undefined;
}

/**
 * A civilian's vote that reads the clues, or undefined where they tell it nothing: the one other
 * seat whose clue is not a letter of its own word; else the one other seat whose clue differs
 * from all the other seats' one shared clue (civilians that agree expose a spy that does not).
 */
export function informedVote(word: string, clues: readonly string[], seat: number): number | undefined {
  const odd = oddLetterSeat(word, clues, seat);
  if (odd !== undefined) return odd;
  const others = clues.flatMap((c, i) => (i === seat ? [] : [{ seat: i, clue: c }]));
  const apart = others.filter((x) => {
    const rest = others.filter((y) => y !== x);
    return rest.length >= 2 && rest.every((y) => y.clue === rest[0].clue && y.clue !== x.clue);
  });
  return apart.length === 1 ? apart[0].seat : undefined;
}
