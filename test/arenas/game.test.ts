import { expect } from 'chai';
import { scriptedTurn } from './scripted.js';
import { firstValueFrom, toArray } from 'rxjs';
import { GameArena, playGroups, type ArenaContext, type GameObservation } from '../../arenas/index.js';
import { OutcomeJudge } from '../../judges/outcome.js';
import { PlayerRole } from '../../roles/player.js';
import type { Turn } from '../../src/core/types.js';
import { kuhnPoker } from '../../src/games/kuhn.js';

/** A context whose players write what `choose` says, parsed by the player role. */
function scripted(
  choose: (role: string, o: GameObservation, n: number) => string,
): ArenaContext & { seen: GameObservation[] } {
  const role = new PlayerRole();
  const seen: GameObservation[] = [];
  let n = 0;
  return {
    seen,
    async act(r, observation, options) {
      const o = observation as unknown as GameObservation;
      seen.push(o);
      const text = choose(r, o, n++);
      const turn: Turn = scriptedTurn(r, text, role.parse(text, observation));
      if (options?.compare) turn.compare = options.compare;
      return turn;
    },
  };
}

const seeds = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `seed-1-${i}`, family: 'arithmetic', prompt: '' }));

describe('game arena', () => {
  it('plays Kuhn by text: seats as roles, each move a batch-compared turn, the returns as the outcome', async () => {
    const arena = new GameArena({ game: 'kuhn' });
    expect(arena.roles).to.deep.equal({ seat0: 'player', seat1: 'player' });
    const ctx = scripted(() => '1'); // always bet / call
    const episodes = await firstValueFrom(playGroups(arena, seeds(8), 2, ctx).pipe(toArray()));
    expect(episodes).to.have.length(16);
    for (const e of episodes) {
      expect(e.turns.map((t) => t.role)).to.deep.equal(['seat0', 'seat1']); // bet, call: showdown
      expect(e.turns.every((t) => t.compare === 'batch' && t.action.valid)).to.equal(true);
      const [c0, c1] = (e.info!.history as number[]).slice(0, 2);
      expect(e.outcome).to.deep.equal(c0 > c1 ? { seat0: 2, seat1: -2 } : { seat0: -2, seat1: 2 });
    }
    // the same seed deals the same cards; the two members of a group share a deal
    const deal = (id: string) => JSON.stringify(episodes.find((e) => e.id === id)!.info!.history);
    expect(deal('seed-1-3#0')).to.equal(deal('seed-1-3#1'));
    expect(new Set(episodes.map((e) => JSON.stringify((e.info!.history as number[]).slice(0, 2)))).size).to.be.above(1);
    // what a player saw: its own card only, and the legal moves' codes
    expect(ctx.seen[0].legal).to.deep.equal([
      { code: '0', name: 'pass' },
      { code: '1', name: 'bet' },
    ]);
    expect(new PlayerRole().render({ ...ctx.seen[0] })).to.match(/card [JQK].* 0=pass 1=bet:$/);
  });

  it('an unparsable or illegal move ends the game as an invalid action: that seat gets -penalty, the others 0', async () => {
    const arena = new GameArena({ game: 'kuhn', penalty: 3 });
    const episodes = await firstValueFrom(
      playGroups(
        arena,
        seeds(2),
        1,
        scripted((role) => (role === 'seat1' ? 'raise!' : '0')),
      ).pipe(toArray()),
    );
    for (const e of episodes) {
      expect(e.turns).to.have.length(2);
      expect(e.turns[1].action.valid).to.equal(false);
      expect(e.turns[1].action.error).to.match(/'raise!' is not one of the legal moves 0 \(pass\), 1 \(bet\)/);
      expect(e.outcome).to.deep.equal({ seat0: 0, seat1: -3 });
      expect(e.info!.invalid).to.equal('seat1');
    }
    // a legal-looking code that is not legal here (tic-tac-toe: a taken square)
    const ttt = new GameArena({ game: 'tictactoe' });
    const [e] = await firstValueFrom(
      playGroups(
        ttt,
        seeds(1),
        1,
        scripted(() => '4'),
      ).pipe(toArray()),
    );
    expect(e.turns).to.have.length(2);
    expect(e.turns[1].action).to.deep.include({ valid: false });
    expect(e.outcome).to.deep.equal({ seat0: 0, seat1: -1 });
  });

  it("the outcome judge rewards each turn of its roles with the role's outcome and abstains elsewhere", async () => {
    const arena = new GameArena({ game: 'kuhn' });
    const episodes = await firstValueFrom(
      playGroups(
        arena,
        seeds(4),
        1,
        scripted(() => '1'),
      ).pipe(toArray()),
    );
    const rewards = new OutcomeJudge({ role: ['seat0'] }).score(episodes);
    episodes.forEach((e, i) => expect(rewards[i]).to.deep.equal([e.outcome!.seat0, null]));
    expect(new OutcomeJudge({ role: ['seat0'] }).score([{ ...episodes[0], outcome: undefined }])).to.deep.equal([
      [null, null],
    ]);
    expect(() => new OutcomeJudge({})).to.throw(/option 'role'/);
  });

  it('refuses an unknown game or option, naming the known ones', () => {
    expect(() => new GameArena({ game: 'chess' })).to.throw(
      /arena\.options\.game: expected one of "rps", "tictactoe", "kuhn", "leduc", received "chess"/,
    );
    expect(() => new GameArena({ seats: 2 })).to.throw(/arena\.options\.seats: unrecognized key; known: game, penalty/);
    expect(kuhnPoker.numActions).to.be.at.most(10);
  });
});
