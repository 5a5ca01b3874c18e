import type { Observable } from 'rxjs';
import { fromRun } from '../src/core/operators/from-run.js';
import type { Episode, RoleId, Task, Turn } from '../src/core/types.js';
import type { GameObservation } from '../src/core/game-text.js';
import type { Observation } from '../src/core/role.js';
import { hashText } from '../src/util/hash.js';
import { Rng } from '../src/util/rng.js';
import { z } from 'zod';
import { arenaOptions } from './options.js';
import type { Arena, ArenaContext, EpisodeEnd } from '../src/core/arena.js';

/** The secret words, in groups of four that share letters: the spy's word is another of its group's. */
export const SPY_GROUPS = [
  ['bad', 'bag', 'dab', 'gab'],
  ['bed', 'fed', 'fee', 'beef'],
  ['ace', 'ache', 'each', 'face'],
  ['had', 'hag', 'head', 'ahead'],
] as const;
/** What a clue may be: one of these letters (every word is written in them). */
export const CLUE_LETTERS = 'abcdefgh';
export const SPY_ROLES = ['spy', 'civilian'] as const;
export type SpyRole = (typeof SPY_ROLES)[number];

export const SpyArenaOptionsSchema = z.strictObject({
  players: z.number().int().min(3, 'at least 3: two civilians can outvote one spy').max(9).default(4), // seats 0..players-1 (one-digit votes)
  told: z.boolean().default(true), // the spy is told it is the spy (else every seat is shown 'you' and only its word)
  penalty: z.number().nonnegative().default(1), // an invalid clue or vote's own outcome is -penalty
  // 'any': a clue is any of CLUE_LETTERS; 'word': only a letter of the seat's own word (a true clue, as in the party game)
  clues: z.enum(['any', 'word']).default('any'),
  // a civilian's valid vote that names the spy gets this on top of the team's outcome (its turn's own outcome)
  voteReward: z.number().nonnegative().default(0),
  // K >= 2: each model-played seat samples K votes from the same showing; the first is cast, and
  // every sample's own outcome is what its side would score had that vote been cast instead (the
  // other seats' votes fixed), compared within the seat's K samples
  voteRerollouts: z.number().int().min(0).max(16).default(0),
  // roles the arena plays itself, uniformly at random (a uniform clue letter and vote); their moves are not turns
  uniform: z.array(z.enum(SPY_ROLES)).default([]),
});
export type SpyArenaOptions = z.output<typeof SpyArenaOptionsSchema>;

/** One deal: each seat's word and which seat is the spy. */
export interface SpyDeal {
  spy: number;
  words: string[];
}

/** The deal of a task: a group, the civilians' word, another of the group for the spy, the spy's seat; all from the task id. */
export function spyDeal(taskId: string, players: number): SpyDeal {
  const rng = new Rng(hashText(taskId));
  const group = SPY_GROUPS[rng.int(SPY_GROUPS.length)];
  const c = rng.int(group.length);
  const s = (c + 1 + rng.int(group.length - 1)) % group.length;
  const spy = rng.int(players);
  return { spy, words: Array.from({ length: players }, (_, i) => (i === spy ? group[s] : group[c])) };
}

/** The letters a seat may give as its clue: every clue letter, or (`word`) its own word's, in CLUE_LETTERS order. */
export function clueLetters(word: string, clues: 'any' | 'word'): string[] {
  return [...CLUE_LETTERS].filter((l) => clues === 'any' || word.includes(l));
}

/**
 * The seat voted out: the one with strictly the most votes (a vote is a seat number or null
 * for an abstention); a tie for the most, or no vote at all, puts nobody out (null).
 */
export function tally(votes: readonly (number | null)[]): number | null {
  const count = new Map<number, number>();
  for (const v of votes) if (v !== null) count.set(v, (count.get(v) ?? 0) + 1);
  const most = Math.max(0, ...count.values());
  const top = [...count].filter(([, n]) => n === most);
  return most > 0 && top.length === 1 ? top[0][0] : null;
}

/**
 * Who is the spy (SpyRL; the party game "Undercover"): of `players` seats, all but one are
 * dealt the same secret word and the spy another word of the same group (SPY_GROUPS), from a
 * seed of the task id. Each seat says one clue, a letter of CLUE_LETTERS, without seeing the
 * others' (one step for all seats); then each sees every other seat's clue and votes for one
 * seat (not its own). The seat with strictly the most votes is out; a tie puts nobody out.
 * The outcome is zero-sum between the two sides: the spy +1 if it is not voted out, else -1;
 * the civilians the negative, each civilian turn alike. Roles are `spy` and `civilian`, so
 * the loop's role baselines ('rae', SPIRAL's) are conditioned on the side. An invalid clue is
 * shown as '?' and an invalid vote abstains; the turn's own outcome is -penalty.
 * `clues: 'word'` lets a seat name only a letter of its own word, so a spy whose word lacks
 * the civilians' letter cannot say it. `voteReward: w` pays each civilian for its own vote:
 * a valid civilian vote's own outcome is the team's (+1 or -1) plus w when it names the spy,
 * so the `outcome` judge credits a voter with what its vote did, not only with what the
 * other votes did (the team outcome alone pays a right vote -1 when the others split).
 * The spy's turns and the civilians' clues keep the team's outcome.
 * `voteRerollouts: K` (K >= 2) gives the vote the local re-rollouts Memory-R2 gives its
 * manager: each model-played seat samples K votes from the one showing, casts the first, and
 * each sample's own outcome is its side's result had it been cast (the other votes as cast;
 * the vote is the game's last move, so that result is exact), plus the vote reward. Its K
 * samples form one comparison group (`episode:v<seat>`), so a group-relative advantage
 * (`grpo`) compares votes on the same clues and nothing else: the noise of the clues and of
 * the other deals leaves the vote's credit.
 * Prompts use the player role: `civ bag clue a=a ... h=h:`, `spy dab vote 0=b 2=a 3=g:`.
 */
export class SpyArena implements Arena {
  readonly kind = 'spy';
  readonly seedsTasks = true;
  readonly roles: Record<RoleId, string> = { spy: 'player', civilian: 'player' };
  readonly options: SpyArenaOptions;
  readonly progress = ['spy/vote_accuracy', 'spy/survival'];

  constructor(options: unknown) {
    this.options = arenaOptions(SpyArenaOptionsSchema, options);
  }

  play(task: Task, ctx: ArenaContext): Observable<Turn | EpisodeEnd> {
    return fromRun((emit) => this.run(task, ctx, emit));
  }

  /** What seat `seat` is shown: its tag and word, then the clue letters or the other seats' clues. */
  observation(task: Task, deal: SpyDeal, seat: number, clues?: readonly string[]): GameObservation {
    const tag = !this.options.told ? 'you' : seat === deal.spy ? 'spy' : 'civ';
    const legal = clues
      ? clues.flatMap((c, i) => (i === seat ? [] : [{ code: String(i), name: c }]))
      : clueLetters(deal.words[seat], this.options.clues).map((l) => ({ code: l, name: l }));
    const text = `${tag} ${deal.words[seat]} ${clues ? 'vote' : 'clue'}`;
    return { task, text, legal, features: [], mask: [], state: `${text} ${legal.map((m) => m.name).join('')}` };
  }

  /** The longest prompts of a task's deal, each role's clue and vote: what the preflight checks fit the context. */
  observations(task: Task): Array<{ role: RoleId; observation: Observation }> {
    const deal = spyDeal(task.id, this.options.players);
    const clues = deal.words.map(() => '?');
    const civilian = (deal.spy + 1) % this.options.players;
    return [deal.spy, civilian].flatMap((seat) =>
      [undefined, clues].map((c) => ({
        role: seat === deal.spy ? 'spy' : 'civilian',
        observation: { ...this.observation(task, deal, seat, c) },
      })),
    );
  }

  private async run(task: Task, ctx: ArenaContext, emit: (x: Turn | EpisodeEnd) => void): Promise<void> {
    const n = this.options.players;
    const deal = spyDeal(task.id, n);
    const rng = new Rng(hashText(`${task.id}/uniform`));
    const roleOf = (seat: number): SpyRole => (seat === deal.spy ? 'spy' : 'civilian');
    const scripted = (seat: number) => this.options.uniform.includes(roleOf(seat));
    const seats = Array.from({ length: n }, (_, i) => i);
    // one step for every seat: its move and, when a model made it, its turns (the first is the move)
    const step = (show: (seat: number) => GameObservation, samples = 1) =>
      Promise.all(
        seats.map(async (seat) => {
          const o = show(seat);
          if (scripted(seat)) return { move: o.legal[rng.int(o.legal.length)].code, turns: [] as Turn[] };
          const compare = samples > 1 ? (`episode:v${seat}` as const) : 'batch';
          const turns = await Promise.all(
            Array.from({ length: samples }, () => ctx.act(roleOf(seat), { ...o }, { compare })),
          );
          for (const t of turns) if (!t.action.valid) t.outcome = -this.options.penalty;
          return { move: turns[0].action.valid ? turns[0].action.value! : null, turns };
        }),
      );
    const said = await step((seat) => this.observation(task, deal, seat));
    const clues = said.map((s) => s.move ?? '?');
    const k = this.options.voteRerollouts;
    const cast = await step((seat) => this.observation(task, deal, seat, clues), Math.max(1, k));
    const votes = cast.map((v) => (v.move === null ? null : Number(v.move)));
    const out = tally(votes);
    const team = out !== deal.spy ? -1 : 1;
    // what seat's side scores had it cast `vote` (the others' votes as cast), with its vote reward
    const scored = (seat: number, vote: number) => {
      const side = tally(votes.map((v, i) => (i === seat ? vote : v))) === deal.spy ? 1 : -1;
      if (seat === deal.spy) return -side;
      return side + (vote === deal.spy ? this.options.voteReward : 0);
    };
    cast.forEach(({ turns }, seat) => {
      for (const t of turns)
        if (t.action.valid && (k > 1 || (this.options.voteReward > 0 && seat !== deal.spy)))
          t.outcome = scored(seat, Number(t.action.value));
    });
    for (const s of [...said, ...cast]) s.turns.forEach(emit);
    emit({
      end: true,
      outcome: { spy: -team, civilian: team },
      info: { words: deal.words, spy: deal.spy, clues, votes, out },
    });
  }

  /**
   * `spy/survival` (episodes the spy was not voted out), `spy/vote_accuracy` (civilians' votes
   * that name the spy, an abstention a miss), `spy/valid_rate`; and the same split by who played
   * which side when a side was a frozen snapshot (its turns' model `<id>@<snapshot>`):
   * `spy/vs_snapshot/survival` (the learner as spy) and `spy/vs_snapshot/vote_accuracy` (as civilians);
   * with each vote accuracy, `odd_letter_vote` (oddLetterVotes) when some civilian saw one odd letter.
   */
  metrics(episodes: readonly Episode[]): Record<string, number> {
    const m: Record<string, number> = {};
    const frozen = (e: Episode, role: SpyRole) => e.turns.some((t) => t.role === role && t.model.includes('@'));
    const measure = (prefix: string, list: readonly Episode[], which: 'survival' | 'vote_accuracy' | 'both') => {
      const played = list.filter((e) => e.info);
      if (!played.length) return;
      if (which !== 'vote_accuracy') m[`${prefix}survival`] = mean(played.map((e) => (e.outcome?.spy === 1 ? 1 : 0)));
      if (which !== 'survival') {
        const hits = played.flatMap((e) => {
          const { spy, votes } = e.info as { spy: number; votes: (number | null)[] };
          return votes.flatMap((v, seat) => (seat === spy ? [] : [v === spy ? 1 : 0]));
        });
        m[`${prefix}vote_accuracy`] = mean(hits);
        const odd = played.flatMap((e) => oddLetterVotes(e.info as unknown as SpyInfo));
        if (odd.length) m[`${prefix}odd_letter_vote`] = mean(odd);
      }
    };
    measure('spy/', episodes, 'both');
    measure(
      'spy/vs_snapshot/',
      episodes.filter((e) => frozen(e, 'civilian') && !frozen(e, 'spy')),
      'survival',
    );
    measure(
      'spy/vs_snapshot/',
      episodes.filter((e) => frozen(e, 'spy') && !frozen(e, 'civilian')),
      'vote_accuracy',
    );
    const turns = episodes.flatMap((e) => e.turns);
    if (turns.length) m['spy/valid_rate'] = mean(turns.map((t) => (t.action.valid ? 1 : 0)));
    return m;
  }
}

interface SpyInfo {
  words: string[];
  spy: number;
  clues: string[];
  votes: (number | null)[];
}

/**
 * For each civilian that saw exactly one other seat give a letter its own word lacks: 1 if
 * it voted for that seat, else 0. The rule a voter can follow without any agreement with the
 * others (with true clues that seat is the spy); a uniform vote follows it 1/3 of the time.
 */
export function oddLetterVotes({ words, spy, clues, votes }: SpyInfo): number[] {
  return words.flatMap((word, seat) => {
    if (seat === spy) return [];
    const odd = clues.flatMap((c, i) => (i !== seat && c !== '?' && !word.includes(c) ? [i] : []));
    return odd.length === 1 ? [votes[seat] === odd[0] ? 1 : 0] : [];
  });
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
