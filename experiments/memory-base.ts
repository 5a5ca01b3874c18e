/**
 * A memory base: a fresh model taught by supervised training the two formats of the memory
 * arena, with random choices, not right ones (format only, as the judge and critic bases):
 * - as the manager (`<role:memory>`), a random valid operation on what it is shown: NOOP,
 *   ADD the turn, UPDATE a random shown entry with the turn, or DELETE one;
 * - as the answer agent (`<role:solver>`), a random shown entry and its last word, or `-:unknown`.
 * So it copies the turn and indexes entries right, and knows nothing of which operation or
 * entry is the right one: that is left to RL from the answers' outcome. The observations come
 * from playing dialogues of the given horizons, the bank edited half by the rule manager and
 * half by random operations, so they cover banks a learner will meet.
 *   npx tsx experiments/memory-base.ts --out checkpoints/base-memory [--steps 3000] [--horizons 8,16,32]
 */
import { firstValueFrom, toArray } from 'rxjs';
import { MemoryDialogueArena } from '../arenas/memory-dialogue.js';
import type { ArenaContext } from '../arenas/types.js';
import { ruleContext } from '../memory/rules.js';
import { AnswerRole, MemoryManagerRole } from '../roles/memory.js';
import type { Observation } from '../roles/types.js';
import { initBackend } from '../src/backend/index.js';
import { generate } from '../src/models/generate.js';
import { saveModel } from '../src/models/store.js';
import { trainSupervised } from '../src/models/supervised.js';
import { TinyLM } from '../src/models/tinylm.js';
import { dialogue, UNKNOWN } from '../src/tasks/dialogue.js';
import { CharTokenizer } from '../src/tokenizer/index.js';
import { Rng } from '../src/util/rng.js';
import { arg } from './script.js';

const seed = Number(arg('seed', '1'));
const rng = new Rng(seed);
const roles = { memory: new MemoryManagerRole(), answer: new AnswerRole() };

/** A random valid manager operation on what it is shown. */
function randomOp(o: Observation): string {
  const shown = o.memory as string[];
  const choices = [
    'NOOP',
    ...(o.full ? [] : [`ADD ${o.fact}`]),
    ...shown.map((_, i) => `UPDATE ${i} ${o.fact}`),
    ...shown.map((_, i) => `DELETE ${i}`),
  ];
  return choices[rng.int(choices.length)];
}

/** A random selection among the entries shown, and that entry's last word, or none and unknown. */
function randomAnswer(o: Observation): string {
  const shown = o.memory as string[];
  const i = rng.int(shown.length + 1) - 1;
  if (i < 0) return `-:${UNKNOWN}`;
  const last = shown[i].split(' ').pop()!;
  return `${i}:${last === '-' ? UNKNOWN : last}`;
}

const seen: Array<{ role: 'memory' | 'answer'; o: Observation; text: string }> = [];
const collect: ArenaContext = {
  async act(role, o, options) {
    seen.push({ role: role as 'memory' | 'answer', o, text: role === 'memory' ? randomOp(o) : randomAnswer(o) });
    if (role === 'memory' && rng.next() < 0.5) {
      const turn = await ruleContext.act(role, o, options);
      const text = randomOp(o);
      return { ...turn, text, action: roles.memory.parse(text, o) };
    }
    return ruleContext.act(role, o, options);
  },
};

await initBackend('auto');
const arena = new MemoryDialogueArena(
  { maxEntries: Number(arg('maxEntries', '8')), retrieve: Number(arg('retrieve', '3')), rerollouts: 2, probes: 2 },
  dialogue as never,
);
for (const sessions of arg('horizons', '8,16,32').split(',').map(Number)) {
  const d = dialogue.validate({ sessions });
  for (let i = 0; i < Number(arg('dialogues', '60')); i++)
    await firstValueFrom(arena.play(dialogue.generate(rng, d, i), collect).pipe(toArray()));
}
const tokenizer = new CharTokenizer();
const token = (role: 'memory' | 'answer') => (role === 'answer' ? roles.answer.token : roles.memory.kind);
const examples = seen.map(({ role, o, text }) => ({
  prompt: tokenizer.prompt(roles[role].render(o), token(role)),
  completion: [...tokenizer.encode(text), tokenizer.eos],
}));
const context = Math.max(...examples.map((e) => e.prompt.length + e.completion.length));
console.log(
  JSON.stringify({
    examples: examples.length,
    manager: seen.filter((s) => s.role === 'memory').length,
    longest: context,
  }),
);
const model = new TinyLM({
  vocabSize: tokenizer.size,
  dModel: 128,
  nHeads: 4,
  nLayers: 4,
  context: Number(arg('context', '112')),
  seed,
});
const steps = Number(arg('steps', '3000'));
const probe = seen.filter((_, i) => i % 97 === 0).slice(0, 256);
trainSupervised(model, examples, {
  steps,
  batchSize: 64,
  lr: Number(arg('lr', '1e-3')),
  seed,
  onStep: (step, loss) => {
    if ((step + 1) % 250 !== 0) return;
    // the share of sampled outputs that parse: the format is learned when both reach ~1
    const outs = generate(
      model,
      probe.map((s) => tokenizer.prompt(roles[s.role].render(s.o), token(s.role))),
      { maxNewTokens: 26, temperature: 1, seed: step, eos: tokenizer.eos },
    );
    const ok = (role: string) => {
      const mine = probe.map((s, i) => ({ s, g: outs[i] })).filter((x) => x.s.role === role);
      return (
        mine.filter(
          (x) =>
            x.g.tokens.at(-1) === tokenizer.eos &&
            roles[x.s.role].parse(tokenizer.decode(x.g.tokens.slice(0, -1)), x.s.o).valid,
        ).length / mine.length
      );
    };
    console.log(
      JSON.stringify({
        step: step + 1,
        loss: +loss.toFixed(4),
        manager_valid: +ok('memory').toFixed(3),
        answer_valid: +ok('answer').toFixed(3),
      }),
    );
  },
});
const out = arg('out');
await saveModel(out, model, tokenizer, {
  made: 'experiments/memory-base.ts',
  steps,
  labels: 'random operations and selections (format only)',
});
console.log(`wrote ${out}`);
