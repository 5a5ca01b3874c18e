import { expect } from 'chai';
import { ConfigError, parseConfig } from '../../src/config/load.js';

/** A self-play config on one Hugging Face base; `roles` and `base` change per test. */
const config = (
  roles: Record<string, unknown>,
  base: Record<string, unknown> = { kind: 'hf', path: 'BASE' },
  models: Record<string, unknown> = {},
) => ({
  name: 'a',
  iterations: 1,
  models: { base, ...models },
  roles,
  tasks: { family: 'arithmetic', train: { source: 'generate', count: 4 } },
  judges: [{ kind: 'verifier' }],
});

const issues = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  return [];
};

describe('an adapter per role on one base (roles.<id>.adapter)', () => {
  it("makes each adapter a model of its own with the base's LoRA settings, and drops the base no role plays", () => {
    const c = parseConfig(
      config(
        {
          proposer: { kind: 'proposer', model: 'base', adapter: 'proposer' },
          solver: { kind: 'solver', model: 'base', adapter: 'solver' },
        },
        { kind: 'hf', path: 'BASE', lora: { r: 4, alpha: 8 } },
      ),
    );
    expect(Object.keys(c.models).sort()).to.deep.equal(['base-proposer', 'base-solver']);
    expect(c.roles.proposer.model).to.equal('base-proposer');
    expect(c.roles.solver.model).to.equal('base-solver');
    for (const m of Object.values(c.models)) {
      expect(m.path).to.equal('BASE');
      expect(m.lora).to.include({ r: 4, alpha: 8 });
    }
    expect(c.roles.solver).to.not.have.property('adapter');
    // parsing what it produced gives it again (a run's saved config resumes as it ran)
    expect(parseConfig(c)).to.deep.equal(c);
  });

  it('roles naming one adapter share it; a role on the base itself keeps the base; no lora given means the defaults', () => {
    const c = parseConfig(
      config({
        a: { kind: 'solver', model: 'base', adapter: 'shared' },
        b: { kind: 'judge', model: 'base', adapter: 'shared' },
        c: { kind: 'proposer', model: 'base' },
      }),
    );
    expect(Object.keys(c.models).sort()).to.deep.equal(['base', 'base-shared']);
    expect(c.roles.a.model).to.equal('base-shared');
    expect(c.roles.b.model).to.equal('base-shared');
    expect(c.roles.c.model).to.equal('base');
    expect(c.models['base-shared'].lora).to.include({ r: 8, alpha: 16, targetModules: 'all-linear' });
    expect(c.models.base.lora).to.equal(undefined);
  });

  it('refuses an adapter on a model that is not a Hugging Face base, and an adapter id taken by a model', () => {
    expect(
      issues(() => parseConfig(config({ s: { kind: 'solver', model: 'base', adapter: 'x' } }, { kind: 'tinylm' }))),
    ).to.deep.equal(['roles.s.adapter: an adapter is trained on a Hugging Face base; model "base" is tinylm']);
    expect(
      issues(() =>
        parseConfig(
          config({ s: { kind: 'solver', model: 'base', adapter: 'x' } }, undefined, {
            'base-x': { kind: 'hf', path: 'OTHER' },
          }),
        ),
      ),
    ).to.deep.equal(['roles.s.adapter: the adapter\'s model id "base-x" is taken by a model of that name; rename one']);
    expect(issues(() => parseConfig(config({ s: { kind: 'solver', model: 'base', adapter: '../x' } })))[0]).to.match(
      /^roles\.s\.adapter: must be a plain name/,
    );
  });

  it("starts a named adapter from the base's `adapters` directory, the others new; refuses a name no role plays", () => {
    const roles = {
      solver: { kind: 'solver', model: 'base', adapter: 'solver' },
      judge: { kind: 'judge', model: 'base', adapter: 'judge' },
    };
    const c = parseConfig(
      config(roles, { kind: 'hf', path: 'BASE', lora: { r: 4 }, reference: true, adapters: { judge: 'RUN/judge' } }),
    );
    expect(c.models['base-judge']).to.include({ path: 'BASE', adapter: 'RUN/judge', reference: true });
    expect(c.models['base-judge'].lora).to.equal(undefined); // the directory has its own LoRA settings
    expect(c.models['base-solver'].adapter).to.equal(undefined);
    expect(c.models['base-solver'].lora).to.include({ r: 4 });
    for (const m of Object.values(c.models)) expect(m).to.not.have.property('adapters');
    expect(parseConfig(c)).to.deep.equal(c);
    expect(
      issues(() => parseConfig(config(roles, { kind: 'hf', path: 'BASE', adapters: { juge: 'RUN/judge' } }))),
    ).to.deep.equal([
      'models.base.adapters.juge: no role plays adapter "juge" on model "base"; its roles\' adapters: solver, judge',
    ]);
    expect(issues(() => parseConfig(config(roles, { kind: 'tinylm', adapters: { judge: 'X' } })))).to.include(
      "models.base.adapters: only for kind 'hf'",
    );
  });
});
