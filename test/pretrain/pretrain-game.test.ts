import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moveCode } from '../../arenas/game.js';
import { gameExamples } from '../../arenas/game-corpus.js';
import { pretrain, PretrainSchema } from '../../src/pretrain/index.js';
import { kuhnPoker } from '../../src/games/kuhn.js';
import { loadModel } from '../../src/models/store.js';
import { CharTokenizer } from '../../src/tokenizer/index.js';
import { Rng } from '../../src/util/rng.js';
import { TEST_BACKEND } from '../needs.js';

const tokenizer = new CharTokenizer();

describe('pretrain: a game text base (game:)', function () {
  this.timeout(120000);

  it("every example is a player's prompt and a legal move's code; a random policy differs between states, uniform does not", () => {
    const random = gameExamples(tokenizer, { game: 'kuhn', policy: 'random' }, 2000, new Rng(1), 112);
    const codes = new Set(Array.from({ length: kuhnPoker.numActions }, (_, a) => moveCode(a)));
    const byPrompt = new Map<string, number[]>();
    for (const e of random) {
      expect(e.completion.at(-1)).to.equal(tokenizer.eos);
      const move = tokenizer.decode(e.completion.slice(0, -1));
      expect(codes.has(move)).to.equal(true);
      const key = tokenizer.decode(e.prompt);
      byPrompt.set(key, [...(byPrompt.get(key) ?? []), Number(move)]);
    }
    expect(byPrompt.size).to.equal(12); // Kuhn's information states, each as the role renders it
    const betShare = [...byPrompt.values()].map((m) => m.filter((a) => a === 1).length / m.length);
    expect(Math.max(...betShare) - Math.min(...betShare)).to.be.above(0.2); // each state its own mix
    expect(() => gameExamples(tokenizer, { game: 'kuhn', policy: 'uniform' }, 10, new Rng(1), 8)).to.throw(
      /model\.context 8 is too short/,
    );
  });

  it('pretrain makes the base a game config names, measured by its legal mass and exploitability', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-ptgame-'));
    const c = PretrainSchema.parse({
      name: 'g',
      backend: TEST_BACKEND,
      workers: 1,
      task: { family: 'arithmetic' },
      corpus: { train: 512, heldOut: 1 },
      model: { dModel: 32, nHeads: 4, nLayers: 1, context: 112 },
      game: { game: 'kuhn' },
      train: { steps: 60, batchSize: 32, lr: 0.003 },
      evalEvery: 60,
      out: join(root, 'kuhn'),
      outDir: join(root, 'runs'),
    });
    const before = await pretrain({ ...c, train: { ...c.train, steps: 1 }, out: join(root, 'k0') }, { log: () => {} });
    const got = await pretrain(c, { log: () => {} });
    expect(before.game!.legalMass).to.be.below(0.1); // a fresh model seldom writes a legal move
    expect(got.game!.legalMass).to.be.above(0.9);
    expect(got.game!.exploitability).to.be.within(0, 1);
    expect(got.heldOut).to.equal(undefined); // it answers no task
    const saved = await loadModel(join(root, 'kuhn'));
    expect((saved.extra.game as { game: string }).game).to.equal('kuhn');
    saved.model.dispose();
    expect(() => PretrainSchema.parse({ ...c, memory: {} })).to.throw(/one role corpus at a time/);
  });
});
