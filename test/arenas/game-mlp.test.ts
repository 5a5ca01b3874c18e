import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents, GameArena, playGroups } from '../../arenas/index.js';
import { PlayerRole } from '../../roles/player.js';
import type { Episode, Task } from '../../src/core/types.js';
import { MlpPolicy } from '../../src/models/mlp.js';
import { ActServer } from '../../src/serving/act-server.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';

const deals = (n: number): Task[] =>
  Array.from({ length: n }, (_, i) => ({ id: `deal-${i}`, family: 'game', prompt: '' }));

/** `games` games of `arena` with one MLP in every seat, through the agents and an act server. */
async function play(
  arena: GameArena,
  games: number,
  server?: ActServer,
): Promise<{ episodes: Episode[]; server: ActServer }> {
  const { inputSize, numActions } = arena.features;
  const s = server ?? new ActServer('m', new MlpPolicy({ inputSize, numActions, hiddenSizes: [8], seed: 1 }), 7);
  const bindings = Object.fromEntries(
    Object.keys(arena.roles).map((r) => [r, { role: new PlayerRole(), model: 'm', actor: s }]),
  );
  const agents = new Agents(bindings, new CharTokenizer(), { maxNewTokens: 2, temperature: 1 });
  const episodes = await firstValueFrom(playGroups(arena, deals(games), 1, agents).pipe(toArray()));
  return { episodes, server: s };
}

describe('arena game with an MLP policy: numbers in, moves out', () => {
  it('each turn carries the feature vector, the legal mask and the state key; all games in flight share each batch', async () => {
    const arena = new GameArena({ game: 'kuhn' });
    const { episodes, server } = await play(arena, 64);
    expect(episodes).to.have.length(64);
    for (const e of episodes)
      for (const t of e.turns) {
        expect(t.prompt).to.have.length(arena.features.inputSize);
        expect(t.legal).to.have.length(arena.features.numActions);
        expect(t.legal![t.completion[0]]).to.equal(true);
        expect(t.text).to.equal(String(t.completion[0]));
        expect(t.action.valid).to.equal(true); // an MLP cannot write an illegal move
        expect(t.state).to.match(/^[012][pb]*$/); // Kuhn's key: the card, then the moves
        expect(t.logProbs[0]).to.be.below(0);
        expect(t.entropy[0]).to.be.within(0, Math.log(2) + 1e-9);
      }
    // one batched pass per decision step, not per game: Kuhn has at most three steps
    expect(server.stats.requests).to.equal(episodes.reduce((n, e) => n + e.turns.length, 0));
    expect(server.stats.batches).to.be.at.most(3);
  });

  it('exploring starts: the arena plays the first moves of a share of the games itself, and they are no turns', async () => {
    const explore = new GameArena({ game: 'tictactoe', explore: { moves: 2, share: 1 } });
    const { episodes } = await play(explore, 16);
    for (const e of episodes) {
      expect(e.turns[0].state!.slice(0, 9).replace(/\./g, '')).to.have.length(2); // two marks before the first turn
      expect(e.turns[0].role).to.equal('seat0'); // x moved, o moved: x again
    }
    const none = await play(new GameArena({ game: 'tictactoe' }), 16);
    for (const e of none.episodes) expect(e.turns[0].state!.slice(0, 9)).to.equal('.........');
    expect(() => new GameArena({ game: 'tictactoe', explore: { moves: 0 } })).to.throw(/explore\.moves/);
    // vary: openings of 1 to `moves` random moves, each length about as often
    const varied = await play(new GameArena({ game: 'tictactoe', explore: { moves: 4, share: 1, vary: true } }), 200);
    const lengths = varied.episodes.map((e) => e.turns[0].state!.slice(0, 9).replace(/\./g, '').length);
    for (let n = 1; n <= 4; n++) expect(lengths.filter((x) => x === n).length).to.be.within(30, 70);
  });

  it('a text-only observation on an MLP, or a given completion, is refused naming the role and model', async () => {
    const server = new ActServer('m', new MlpPolicy({ inputSize: 4, numActions: 2, hiddenSizes: [], seed: 1 }));
    const agents = new Agents({ solver: { role: new PlayerRole(), model: 'm', actor: server } }, new CharTokenizer(), {
      maxNewTokens: 2,
    });
    const err = await agents.act('solver', { task: deals(1)[0] }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(err).to.match(/role 'solver' plays on model 'm', which reads feature vectors/);
    const wrong = await server.act([1, 2], [true, true]).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(wrong).to.match(/2 features, the policy reads 4/);
  });
});
