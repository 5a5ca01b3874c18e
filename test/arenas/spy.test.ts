import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { scriptedTurn } from './scripted.js';
import { playGroups, type ArenaContext, type GameObservation } from '../../arenas/index.js';
import { oddLetterVotes, SPY_GROUPS, SpyArena, spyDeal, tally } from '../../arenas/spy.js';
import { informedVote, oddLetterSeat, SpyCorpusSchema, spyExamples } from '../../arenas/spy-corpus.js';
import { OutcomeJudge } from '../../judges/outcome.js';
import { PlayerRole } from '../../roles/player.js';
import { TrainerSchema } from '../../src/config/trainer-schema.js';
import { toSamples, type ScoredTurn } from '../../src/engine/rewards.js';
import { RoleBaseline } from '../../src/rl/role-baseline.js';
import type { Episode, Turn } from '../../src/core/types.js';
import { comparisonGroup } from '../../src/core/groups.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';

/** A context whose players write what `choose` says (given the role, observation and seat's word), parsed by the player role. */
function scripted(choose: (role: string, o: GameObservation) => string, model = () => 'm') {
  const role = new PlayerRole();
  const seen: { role: string; o: GameObservation }[] = [];
  const ctx: ArenaContext = {
    async act(r, observation, options) {
      const o = observation as unknown as GameObservation;
      seen.push({ role: r, o });
      const text = choose(r, o);
      const turn: Turn = { ...scriptedTurn(r, text, role.parse(text, observation)), model: model() };
      if (options?.compare) turn.compare = options.compare;
      return turn;
    },
  };
  return { ctx, seen };
}

const seeds = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `seed-1-${i}`, family: 'arithmetic', prompt: '' }));
const play = (arena: SpyArena, ctx: ArenaContext, n = 8, group = 1) =>
  firstValueFrom(playGroups(arena, seeds(n), group, ctx).pipe(toArray()));
/** Civilians say 'a', the spy 'b'; everyone votes for a seat that said 'b' (else the next seat). */
const exposing = (role: string, o: GameObservation) =>
  o.text.endsWith('clue') ? (role === 'spy' ? 'b' : 'a') : (o.legal.find((m) => m.name === 'b') ?? o.legal[0]).code;

/** Every turn scored by the outcome judge for both sides, in its comparison group, as the loop hands them to toSamples. */
function outcomeScored(episodes: readonly Episode[]): ScoredTurn[] {
  const rewards = new OutcomeJudge({ role: ['spy', 'civilian'] }).score(episodes);
  return episodes.flatMap((e, i) =>
    e.turns.map((t, k) => ({
      episode: e,
      turn: k,
      reward: rewards[i][k]!,
      parts: { rewards: [rewards[i][k]], weights: [1] },
      group: comparisonGroup(e, t),
    })),
  );
}

describe('spy arena', () => {
  it('deals one word to the civilians and another of its group to the spy, from the task id', () => {
    const spies = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const d = spyDeal(`t${i}`, 5);
      spies.add(d.spy);
      const civ = d.words.filter((_, s) => s !== d.spy);
      expect(new Set(civ).size).to.equal(1);
      expect(d.words[d.spy]).to.not.equal(civ[0]);
      expect(
        SPY_GROUPS.some((g) => (g as readonly string[]).includes(civ[0]) && g.includes(d.words[d.spy] as never)),
      ).to.equal(true);
      expect(spyDeal(`t${i}`, 5)).to.deep.equal(d);
    }
    expect([...spies].sort()).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('shows each seat its own word and role tag, then the other seats clues to vote on', async () => {
    const arena = new SpyArena({});
    const { ctx, seen } = scripted(exposing);
    const [e] = await play(arena, ctx, 1);
    const { words, spy, clues } = e.info as { words: string[]; spy: number; clues: string[] };
    const role = new PlayerRole();
    const cluesSeen = seen.filter((s) => s.o.text.endsWith('clue'));
    expect(cluesSeen).to.have.length(4);
    for (const s of cluesSeen) {
      expect(s.o.text).to.match(s.role === 'spy' ? /^spy / : /^civ /);
      expect(s.o.text.split(' ')[1]).to.equal(s.role === 'spy' ? words[spy] : words[(spy + 1) % 4]);
      expect(role.render({ ...s.o })).to.match(/clue a=a b=b c=c d=d e=e f=f g=g h=h:$/);
    }
    expect(clues).to.deep.equal(words.map((_, i) => (i === spy ? 'b' : 'a')));
    // a voter sees every other seat's clue, never its own seat
    const votes = seen.filter((s) => s.o.text.endsWith('vote'));
    expect(votes.map((s) => s.o.legal.length)).to.deep.equal([3, 3, 3, 3]);
    expect(votes[spy].o.legal.map((m) => m.name)).to.deep.equal(['a', 'a', 'a']);
    // untold, every seat is 'you'
    const untold = scripted(exposing);
    await play(new SpyArena({ told: false }), untold.ctx, 1);
    expect(untold.seen.every((s) => s.o.text.startsWith('you '))).to.equal(true);
  });

  it('tallies by plurality: a tie or no vote puts nobody out', () => {
    expect(tally([1, 1, 2, 0])).to.equal(1);
    expect(tally([1, 2, 2, 1])).to.equal(null);
    expect(tally([null, 3, null, null])).to.equal(3);
    expect(tally([null, null, null])).to.equal(null);
  });

  it('pays the sides zero-sum: the spy voted out loses, a spy that survives a tie wins', async () => {
    const arena = new SpyArena({});
    const caught = await play(arena, scripted(exposing).ctx);
    for (const e of caught) {
      expect(e.outcome).to.deep.equal({ spy: -1, civilian: 1 });
      expect(e.info!.out).to.equal(e.info!.spy);
      expect(e.turns.map((t) => t.role).filter((r) => r === 'spy')).to.have.length(2);
      expect(e.turns.every((t) => t.compare === 'batch')).to.equal(true);
    }
    expect(arena.metrics(caught)).to.include({ 'spy/survival': 0, 'spy/vote_accuracy': 1, 'spy/valid_rate': 1 });
    // everyone votes for the first seat listed: seat 0 gets three votes, seat 1 one
    const first = await play(arena, scripted((_, o) => (o.text.endsWith('clue') ? 'c' : o.legal[0].code)).ctx);
    for (const e of first) {
      const spy = e.info!.spy as number;
      expect(e.info!.out).to.equal(0);
      expect(e.outcome).to.deep.equal(spy === 0 ? { spy: -1, civilian: 1 } : { spy: 1, civilian: -1 });
    }
    // everyone votes for the next seat: one vote each, a tie, the spy survives
    const next = (role: string, o: GameObservation) => {
      if (o.text.endsWith('clue')) return 'c';
      const codes = o.legal.map((m) => Number(m.code));
      const self = [0, 1, 2, 3].find((s) => !codes.includes(s))!;
      return String((self + 1) % 4);
    };
    const tied = await play(arena, scripted(next).ctx);
    for (const e of tied) expect([e.info!.out, e.outcome]).to.deep.equal([null, { spy: 1, civilian: -1 }]);
    expect(arena.metrics(tied)['spy/survival']).to.equal(1);
  });

  it('an invalid clue shows as ? and an invalid vote abstains; that turn alone gets -penalty', async () => {
    const arena = new SpyArena({ penalty: 2 });
    const bad = (role: string, o: GameObservation) =>
      role === 'spy' ? (o.text.endsWith('clue') ? 'z' : '9') : exposing(role, o);
    const episodes = await play(arena, scripted(bad).ctx, 4);
    const judge = new OutcomeJudge({ role: ['spy', 'civilian'] });
    const rewards = judge.score(episodes);
    episodes.forEach((e, i) => {
      const info = e.info as { spy: number; clues: string[]; votes: (number | null)[] };
      expect(info.clues[info.spy]).to.equal('?');
      expect(info.votes[info.spy]).to.equal(null);
      // nobody said 'b', so every civilian votes its first listed seat: the spy survives unless that is the spy three times
      e.turns.forEach((t, k) =>
        expect(rewards[i][k]).to.equal(t.role === 'spy' ? -2 : (e.outcome as Record<string, number>).civilian),
      );
    });
    expect(arena.metrics(episodes)['spy/valid_rate']).to.equal(6 / 8);
  });

  it('pays each civilian its own vote with voteReward, beside the team outcome; the outcome judge reads it', async () => {
    // civilians vote for the seat that said 'b' (the spy) only when they sit at an even seat, else the first listed
    const split = (role: string, o: GameObservation) => {
      if (o.text.endsWith('clue')) return role === 'spy' ? 'b' : 'a';
      const self = [0, 1, 2, 3].find((s) => !o.legal.some((m) => Number(m.code) === s))!;
      return self % 2 === 0 ? exposing(role, o) : o.legal[0].code;
    };
    const episodes = await play(new SpyArena({ voteReward: 0.5 }), scripted(split).ctx, 16);
    const rewards = new OutcomeJudge({ role: ['spy', 'civilian'] }).score(episodes);
    let hits = 0;
    let misses = 0;
    episodes.forEach((e, i) => {
      const { spy, votes } = e.info as { spy: number; votes: number[] };
      const team = (e.outcome as Record<string, number>).civilian;
      // turns: 4 clues by seat, then 4 votes by seat
      e.turns.forEach((t, k) => {
        const seat = k % 4;
        const own = k >= 4 && t.role === 'civilian' ? (votes[seat] === spy ? 0.5 : 0) : 0;
        expect(rewards[i][k]).to.equal((t.role === 'spy' ? -team : team) + own);
        if (k >= 4 && t.role === 'civilian') votes[seat] === spy ? hits++ : misses++;
      });
    });
    expect(hits).to.be.above(0);
    expect(misses).to.be.above(0);
    // without voteReward a vote turn has no outcome of its own: every civilian turn gets the team's
    const plain = await play(new SpyArena({}), scripted(split).ctx, 4);
    expect(plain.flatMap((e) => e.turns).every((t) => t.outcome === undefined)).to.equal(true);
  });

  it('voteRerollouts: K votes a seat from one showing, the first cast, each paid what its side would score had it been cast', async () => {
    // random votes (some invalid) so samples disagree; clues expose the spy, so counterfactuals differ
    const rng = new Rng(7);
    const noisy = (role: string, o: GameObservation) =>
      o.text.endsWith('clue') ? exposing(role, o) : rng.next() < 0.1 ? 'z' : o.legal[rng.int(o.legal.length)].code;
    const { ctx, seen } = scripted(noisy);
    const episodes = await play(new SpyArena({ voteRerollouts: 3, voteReward: 0.5, penalty: 2 }), ctx, 24);
    expect(seen.filter((x) => !x.o.text.endsWith('clue'))).to.have.length(24 * 4 * 3);
    let differ = 0;
    for (const e of episodes) {
      const { spy, votes } = e.info as { spy: number; votes: (number | null)[] };
      const clues = e.turns.slice(0, 4);
      expect(clues.every((t) => t.compare === 'batch')).to.equal(true);
      for (let seat = 0; seat < 4; seat++) {
        const mine = e.turns.slice(4).filter((t) => t.compare === `episode:v${seat}`);
        expect(mine).to.have.length(3);
        expect(new Set(mine.map((t) => t.prompt.join(','))).size).to.equal(1);
        expect(votes[seat]).to.equal(mine[0].action.valid ? Number(mine[0].action.value) : null);
        for (const t of mine) {
          if (!t.action.valid) {
            expect(t.outcome).to.equal(-2);
            continue;
          }
          const v = Number(t.action.value);
          const out = tally(votes.map((x, i) => (i === seat ? v : x)));
          const side = out === spy ? 1 : -1;
          expect(t.outcome).to.equal(seat === spy ? -side : side + (v === spy ? 0.5 : 0));
          if (t.outcome !== mine[0].outcome) differ++;
        }
      }
    }
    expect(differ).to.be.above(10);
    // the K samples of a seat are compared among themselves: a group-relative advantage centres each seat's votes
    const scored = outcomeScored(episodes);
    const { credited } = toSamples(scored, TrainerSchema.parse({ advantage: 'drgrpo' }));
    const advantage = new Map(credited.map((c) => [c.turn, c.advantage]));
    const groups = new Map<string, number[]>();
    for (const x of scored) {
      const a = advantage.get(x.episode.turns[x.turn])!;
      groups.set(x.group, [...(groups.get(x.group) ?? []), a]);
    }
    expect([...groups.values()].some((xs) => xs.some((a) => a !== 0))).to.equal(true);
    for (const [id, xs] of groups)
      if (id.includes(':v')) expect(Math.abs(xs.reduce((a, b) => a + b, 0))).to.be.below(1e-9);
  });

  it("limits a clue to the seat's own word's letters with clues: word", async () => {
    const arena = new SpyArena({ clues: 'word' });
    const { ctx, seen } = scripted((role, o) => (o.text.endsWith('clue') ? o.legal[o.legal.length - 1].code : '0'));
    const episodes = await play(arena, ctx, 8);
    const role = new PlayerRole();
    for (const s of seen.filter((x) => x.o.text.endsWith('clue'))) {
      const word = s.o.text.split(' ')[1];
      expect(s.o.legal.map((m) => m.code).join('')).to.equal([...new Set(word)].sort().join(''));
      expect(role.render({ ...s.o })).to.match(
        new RegExp(
          `clue ${[...new Set(word)]
            .sort()
            .map((l) => `${l}=${l}`)
            .join(' ')}:$`,
        ),
      );
    }
    for (const e of episodes) {
      const { words, clues } = e.info as { words: string[]; clues: string[] };
      clues.forEach((c, seat) => expect(words[seat]).to.include(c));
    }
    // a letter outside the word does not parse
    const outside = await play(arena, scripted((_, o) => (o.text.endsWith('clue') ? 'h' : '0')).ctx, 8);
    const told = outside.filter((e) => !(e.info!.words as string[]).some((w) => w.includes('h')));
    expect(told.length).to.be.above(0);
    for (const e of told) expect(e.info!.clues).to.deep.equal(['?', '?', '?', '?']);
  });

  it('measures how often a civilian votes for the one seat whose letter its own word lacks', async () => {
    // civilians say 'a', the spy 'h'; with a civilian word that has 'a' and lacks 'h', 'h' is the one odd letter
    const say = (role: string) => (role === 'spy' ? 'h' : 'a');
    const voteFor = (letter: string) => (role: string, o: GameObservation) =>
      o.text.endsWith('clue') ? say(role) : (o.legal.find((m) => m.name === letter) ?? o.legal[0]).code;
    const arena = new SpyArena({});
    const right = await play(arena, scripted(voteFor('h')).ctx, 32);
    const counted = right.filter((e) => oddLetterVotes(e.info as never).length > 0);
    expect(counted.length).to.be.within(1, 31); // words with 'a' and no 'h' (bad, ace, ...) only
    for (const e of counted) {
      const { words, spy } = e.info as { words: string[]; spy: number };
      expect(words[(spy + 1) % 4])
        .to.include('a')
        .and.not.include('h');
    }
    expect(arena.metrics(right)['spy/odd_letter_vote']).to.equal(1);
    const wrong = await play(arena, scripted(voteFor('a')).ctx, 32);
    expect(arena.metrics(wrong)['spy/odd_letter_vote']).to.equal(0);
    // a seat whose word has 'h' sees no odd letter: nothing to count
    expect(
      oddLetterVotes({
        words: ['ache', 'ache', 'ace', 'ache'],
        spy: 2,
        clues: ['a', 'a', 'h', 'a'],
        votes: [2, 2, 0, 2],
      }),
    ).to.deep.equal([]);
    expect(
      oddLetterVotes({
        words: ['ace', 'ace', 'ache', 'ace'],
        spy: 2,
        clues: ['a', 'c', 'h', '?'],
        votes: [2, 0, 0, null],
      }),
    ).to.deep.equal([1, 0, 0]);
  });

  it('plays a side uniformly itself when asked: its moves are not turns', async () => {
    const arena = new SpyArena({ uniform: ['civilian'] });
    const episodes = await play(arena, scripted(exposing).ctx, 32);
    expect(episodes.every((e) => e.turns.length === 2 && e.turns.every((t) => t.role === 'spy'))).to.equal(true);
    const votes = episodes.flatMap((e) => (e.info!.votes as number[]).filter((_, s) => s !== e.info!.spy));
    expect(new Set(votes).size).to.equal(4); // uniform voters name every seat, their own never
    const accuracy = arena.metrics(episodes)['spy/vote_accuracy'];
    expect(accuracy).to.be.within(0.15, 0.55); // chance: 1/3
  });

  it('splits survival and vote accuracy by the side a frozen snapshot played', async () => {
    const arena = new SpyArena({});
    const asSpy = scripted(exposing, () => 'm'); // learner spy, snapshot civilians below
    let calls = 0;
    const mixed: ArenaContext = {
      act: async (r, o, opt) => {
        const t = await asSpy.ctx.act(r, o, opt);
        if (r === 'civilian') t.model = 'm@it0';
        calls++;
        return t;
      },
    };
    const episodes = await play(arena, mixed, 4);
    expect(calls).to.equal(4 * 8);
    const m = arena.metrics(episodes);
    expect(m['spy/vs_snapshot/survival']).to.equal(0);
    expect(m).to.not.have.property('spy/vs_snapshot/vote_accuracy');
  });

  it('keeps a role-conditioned baseline per side (rae): each side is scored against its own', async () => {
    const episodes: Episode[] = await play(new SpyArena({}), scripted(exposing).ctx, 4);
    const scored = outcomeScored(episodes);
    const trainer = TrainerSchema.parse({ advantage: 'rae', raeDecay: 0.5 });
    const baselines = new RoleBaseline(0.5);
    const { samples, metrics } = toSamples(scored, trainer, {}, baselines);
    expect(samples).to.have.length(32);
    // the spy always loses (-1), the civilians always win (+1): the baselines move apart
    expect(baselines.baseline('spy')).to.be.below(-0.99);
    expect(baselines.baseline('civilian')).to.be.above(0.99);
    expect(metrics['rae/spy/baseline']).to.equal(0);
    // the first spy turn is scored against 0, the next against -0.5 (its own side's baseline only)
    const spy = samples
      .filter((s) => s.role === 'spy')
      .map((s) => (typeof s.advantages === 'number' ? s.advantages : s.advantages[0]));
    expect(spy.slice(0, 2)).to.deep.equal([-1, -0.5]);
  });

  it('teaches a base legal clues and votes, varied per prompt', () => {
    const tokenizer = new CharTokenizer();
    const examples = spyExamples(tokenizer, SpyCorpusSchema.parse({ clues: 'any' }), 400, new Rng(1), 64);
    const text = (ids: readonly number[]) => tokenizer.decode([...ids].filter((t) => t !== tokenizer.eos));
    const moves = examples.map((e) => ({ prompt: text(e.prompt), move: text(e.completion) }));
    for (const { prompt, move } of moves) expect(prompt).to.include(` ${move}=`); // a listed code
    const clues = new Set(moves.filter((m) => m.prompt.includes('clue')).map((m) => m.move));
    expect(clues.size).to.equal(8);
    expect(moves.filter((m) => m.prompt.includes('vote')).length).to.be.within(150, 250);
    // clues: word: every clue, said or shown to a voter, is a letter of that seat's word
    const own = spyExamples(tokenizer, SpyCorpusSchema.parse({ clues: 'word' }), 200, new Rng(2), 64);
    for (const e of own.map((x) => text(x.prompt))) {
      const [, word, kind] = e.split(' ');
      if (kind === 'clue')
        expect(
          e
            .match(/ (\w)=/g)!
            .map((m) => m[1])
            .join(''),
        ).to.equal([...new Set(word)].sort().join(''));
    }
    expect(() => spyExamples(tokenizer, SpyCorpusSchema.parse({ players: 9, votes: 1 }), 10, new Rng(1), 30)).to.throw(
      /model.context 30 is too short/,
    );
  });

  it("informed votes: the one odd letter, else the one clue apart from the others' shared clue; that share of a base's civilian votes", () => {
    expect(informedVote('bag', ['b', 'a', 'd', 'g'], 0)).to.equal(2); // d is not in bag
    expect(informedVote('bag', ['b', 'a', 'a', 'g'], 0)).to.equal(3); // g apart from the two a's
    expect(informedVote('bag', ['b', 'a', 'g', 'b'], 0)).to.equal(undefined); // nothing tells
    expect(informedVote('bag', ['b', 'd', 'h', 'a'], 0)).to.equal(undefined); // two odd letters
    expect(informedVote('bag', ['b', 'a', 'g'], 0)).to.equal(undefined); // two others: no shared clue to stand apart from
    const tokenizer = new CharTokenizer();
    const text = (ids: readonly number[]) => tokenizer.decode([...ids].filter((t) => t !== tokenizer.eos));
    const followed = (informed: number) => {
      const votes = spyExamples(
        tokenizer,
        SpyCorpusSchema.parse({ votes: 1, clues: 'word', informed }),
        600,
        new Rng(3),
        64,
      )
        .map((e) => ({ prompt: text(e.prompt), move: Number(text(e.completion)) }))
        .filter((v) => v.prompt.includes('civ '));
      const told = votes.flatMap((v) => {
        const word = v.prompt.split(' ')[1];
        const clues = ['?', '?', '?', '?'];
        for (const m of v.prompt.matchAll(/ (\d)=(\w)/g)) clues[Number(m[1])] = m[2];
        const seat = clues.indexOf('?');
        const vote = informedVote(word, clues, seat);
        return vote === undefined ? [] : [vote === v.move ? 1 : 0];
      });
      expect(told.length).to.be.above(50);
      return told.reduce((a, b) => a + b, 0) / told.length;
    };
    expect(followed(1)).to.equal(1);
    expect(followed(0)).to.be.below(0.5);
  });

  it('oddVotes: that share of the examples are civilian votes for the one seat whose clue the word lacks', () => {
    expect(oddLetterSeat('bag', ['b', 'a', 'd', 'g'], 0)).to.equal(2);
    expect(oddLetterSeat('bag', ['b', 'd', 'h', 'a'], 0)).to.equal(undefined); // two odd letters
    expect(oddLetterSeat('bag', ['d', 'a', 'g', 'b'], 0)).to.equal(undefined); // the voter's own clue is not counted
    const tokenizer = new CharTokenizer();
    const text = (ids: readonly number[]) => tokenizer.decode([...ids].filter((t) => t !== tokenizer.eos));
    const odd = (oddVotes: number) => {
      const moves = spyExamples(tokenizer, SpyCorpusSchema.parse({ clues: 'word', oddVotes }), 800, new Rng(4), 64).map(
        (e) => ({ prompt: text(e.prompt), move: text(e.completion) }),
      );
      for (const { prompt, move } of moves) expect(prompt).to.include(` ${move}=`); // a listed code
      const rule = moves.filter(({ prompt, move }) => {
        const [tag, word, kind] = prompt.split(' ');
        if (tag !== 'civ' || kind !== 'vote') return false;
        const clues = ['?', '?', '?', '?'];
        for (const m of prompt.matchAll(/ (\d)=(\w)/g)) clues[Number(m[1])] = m[2];
        return oddLetterSeat(word, clues, clues.indexOf('?')) === Number(move);
      });
      return rule.length / moves.length;
    };
    // the plain corpus has odd-letter votes only by chance (about one example in 26)
    expect(odd(0)).to.be.below(0.08);
    expect(odd(0.5)).to.be.within(0.47, 0.6);
  });
});
