import { expect } from 'chai';
import { ARENA_KINDS, ROLE_KINDS, TASK_FAMILIES, makeArena } from '../../src/registry.js';
import { firstValueFrom, toArray } from 'rxjs';
import { Agents, playGroups, type Arena } from '../../arenas/index.js';

import { initBackend } from '../../src/backend/index.js';
import { TinyLM } from '../../src/models/tinylm.js';
import { BatchingServer } from '../../src/serving/server.js';
import { generateTasks } from '../../src/tasks/jsonl.js';

import { CharTokenizer } from '../../src/tokenizer/index.js';
import { TEST_BACKEND } from '../needs.js';

// One conformance test run on every arena and every task family (PettingZoo's habit):
// many seeded episodes with an untrained model, whose output is mostly garbage, must all
// end as well-formed episodes with invalid actions, never as a crash.
describe('arena conformance', () => {
  before(async () => {
    await initBackend(TEST_BACKEND);
  });

  for (const arenaKind of Object.keys(ARENA_KINDS)) {
    for (const [familyName, family] of Object.entries(TASK_FAMILIES)) {
      it(`${arenaKind} plays 3 seeds x 24 episodes of ${familyName}`, async function () {
        if (family.arenas && !family.arenas.includes(arenaKind)) this.skip(); // a family for other arenas (a dialogue is the memory arena's)
        let arena: Arena;
        try {
          arena = makeArena(arenaKind, {}, family);
        } catch (e) {
          if (/cannot read proposals|does not serve task family/.test((e as Error).message)) this.skip(); // a family without a proposal grammar, or one the arena is not for
          throw e;
        }
        const tokenizer = new CharTokenizer();
        const model = new TinyLM({
          vocabSize: tokenizer.size,
          dModel: 16,
          nHeads: 2,
          nLayers: 1,
          context: 512,
          seed: 1,
        }); // room for a game's observation text and a word problem in characters
        for (const seed of [1, 2, 3]) {
          const server = new BatchingServer('m', model, seed);
          const bindings = Object.fromEntries(
            Object.entries(arena.roles).map(([id, kind]) => [
              id,
              { role: ROLE_KINDS[kind]((o) => family.parseAnswer(o)), model: 'm', server },
            ]),
          );
          const agents = new Agents(bindings, tokenizer, { maxNewTokens: 6, temperature: 1 });
          const tasks = arena.seedsTasks
            ? Array.from({ length: 6 }, (_, i) => ({ id: `seed-${i}`, family: family.name, prompt: '' }))
            : generateTasks(family, {}, 6, seed);
          const episodes = await firstValueFrom(playGroups(arena, tasks, 4, agents).pipe(toArray()));
          expect(episodes).to.have.length(24);
          for (const e of episodes) expect(e.id).to.equal(`${e.group}#${e.member}`);
          // every episode in flight shares one forward pass per step: one batch per turn of the protocol
          // (the judge arena's protocol has three steps: the answers, then the verdicts on each order;
          // the critic's: the sneaky attempts, then the verdicts on each showing; peers': answers, verdicts)
          // the memory arena's: one manager step per dialogue turn (8 sessions of 3 by default), then the questions; a flow's: a planner step per turn (3 at most);
          // the observer's: the hints, then the answers to each hint and to the cut view together
          const steps: Record<string, number> = {
            judge: 3,
            'adversarial-critic': 3,
            peer: 2,
            'memory-dialogue': 25,
            flow: 3,
            observer: 2,
          };
          if (!arena.seedsTasks) expect(server.stats.batches).to.be.at.most(steps[arena.kind] ?? 1);
          for (const e of episodes) {
            expect(e.turns.length).to.be.greaterThan(0);
            for (const t of e.turns) {
              expect(t.logProbs).to.have.length(t.completion.length);
              // a valid action carries its value; an invalid one says why and has none
              if (t.action.valid) expect(t.action.value).to.be.a('string');
              else
                expect([t.action.value, typeof t.action.error, t.action.error !== '']).to.deep.equal([
                  null,
                  'string',
                  true,
                ]);
              // an output is parsed only when it ended with end-of-sequence (guards: parsing a cut-off completion)
              if (t.completion[t.completion.length - 1] !== tokenizer.eos) expect(t.action.valid).to.equal(false);
              expect(JSON.parse(JSON.stringify(e))).to.deep.equal(e); // plain JSON
            }
          }
        }
        model.dispose();
      });
    }
  }
});
