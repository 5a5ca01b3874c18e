import { expect } from 'chai';
import { ARENA_KINDS, JUDGE_KINDS, TASK_FAMILIES, evaluatorKinds } from '../../src/registry.js';
import { z } from 'zod';

import { ConfigError, parseOptions } from '../../src/config/issues.js';
import { parseConfig } from '../../src/config/load.js';
import { planExperiment } from '../../src/registry.js';
import { defineArena, defineJudge } from '../../src/api/define.js';

import { tinyConfig } from '../engine/fixtures.js';

/** The keys a kind's options accept, read from its schema (the error must list exactly these). */
function keysOf(schema: z.ZodType): string[] {
  let s = schema as unknown as { _zod: { def: Record<string, unknown> } };
  while (s._zod.def.type !== 'object') s = (s._zod.def.in ?? s._zod.def.innerType ?? s._zod.def.schema) as typeof s;
  return Object.keys(s._zod.def.shape as object);
}

/** The ConfigError `parse` throws, or a failure. */
function refusal(parse: () => unknown): ConfigError {
  try {
    parse();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return e as ConfigError;
  }
  return expect.fail('expected the options to be refused');
}

const kinds: [string, Record<string, { options: z.ZodType }>][] = [
  ['arena', ARENA_KINDS],
  ['judge', JUDGE_KINDS],
  [
    'evaluator',
    Object.fromEntries(
      evaluatorKinds(() => () => undefined).names.map((n) => [
        n,
        evaluatorKinds(() => () => undefined).resolve(n, 'kind'),
      ]),
    ),
  ],
  ['task family', Object.fromEntries(Object.entries(TASK_FAMILIES).map(([n, f]) => [n, { options: f.difficulty! }]))],
];

describe('kind options: one zod schema per kind, errors named by path', () => {
  for (const [concept, table] of kinds) {
    for (const [name, kind] of Object.entries(table)) {
      it(`${concept} '${name}': an unknown option names its path and the known options; a wrong value its path`, () => {
        expect(kind.options, `${concept} ${name} registers a schema`).to.not.equal(undefined);
        const known = keysOf(kind.options);
        const e = refusal(() => parseOptions(kind.options, { bogus: 1 }, 'x.3.options'));
        expect(e.issues).to.deep.include({
          path: 'x.3.options.bogus',
          message: `unrecognized key; known: ${known.join(', ') || '(none)'}`,
        });
        if (known.length) {
          // a list where every option wants something else: each is refused under its own path
          const wrong = refusal(() => parseOptions(kind.options, { [known[0]]: [[]] }, 'x.3.options'));
          expect(wrong.issues.map((i) => i.path)).to.include(`x.3.options.${known[0]}`);
        }
      });
    }
  }

  it('a task family names its difficulty where it is given', () => {
    const e = refusal(() => TASK_FAMILIES.arithmetic.validate({ digits: 9 }, 'arena.options.limits'));
    expect(e.issues).to.deep.equal([
      { path: 'arena.options.limits.digits', message: 'expected a number <= 4, received 9' },
    ]);
  });

  it("the runtime parses each kind's options at its config path, plugins' too", async () => {
    const base = tinyConfig('/nowhere', {
      judges: [{ kind: 'verifier' }, { kind: 'majority', options: { minShare: 2 } }],
    });
    const plan = (c: object, extra = [] as Parameters<typeof planExperiment>[1]) =>
      planExperiment(parseConfig(c), extra).then(
        () => undefined,
        (e: Error) => e,
      );
    const judge = await plan(base);
    expect(judge).to.be.instanceOf(ConfigError);
    expect((judge as ConfigError).issues).to.deep.equal([
      { path: 'judges.1.options.minShare', message: 'expected a number <= 1, received 2' },
    ]);
    const difficulty = await plan({
      ...base,
      judges: [{ kind: 'verifier' }],
      tasks: { ...base.tasks, difficulty: { digits: 1, minDigit: 1 } },
    });
    expect((difficulty as ConfigError).message).to.match(
      /tasks\.difficulty\.minDigit: unrecognized key \(did you mean "minDigits"\?\)/,
    );
    // a plugin registers its schema with its kind, and the runtime parses with it before the factory runs
    let seen: unknown;
    const closeness = defineJudge(
      'closeness',
      (options) => (
        (seen = options),
        { name: 'closeness', roles: new Set(['solver']), score: (b) => b.map((e) => e.turns.map(() => null)) }
      ),
      z.strictObject({ scale: z.number().positive().default(1) }),
    );
    const bad = await plan({ ...base, judges: [{ kind: 'closeness', options: { scal: 2 } }] }, [closeness]);
    expect((bad as ConfigError).issues).to.deep.equal([
      { path: 'judges.0.options.scal', message: 'unrecognized key (did you mean "scale"?); known: scale' },
    ]);
    expect(await plan({ ...base, judges: [{ kind: 'closeness' }] }, [closeness])).to.equal(undefined);
    expect(seen).to.deep.equal({ scale: 1 });
    const duel = defineArena(
      'duel',
      () => ({ kind: 'duel', roles: { solver: 'solver' }, play: () => undefined as never }),
      z.strictObject({ rounds: z.number().int() }),
    );
    const arena = await plan(
      { ...base, judges: [{ kind: 'verifier' }], arena: { ...base.arena, kind: 'duel', options: {} } },
      [duel],
    );
    expect((arena as ConfigError).issues).to.deep.equal([
      { path: 'arena.options.rounds', message: 'required (expected number)' },
    ]);
  });
});
