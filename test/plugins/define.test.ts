import { expect } from 'chai';
import type { Episode, Turn } from '../../src/core/types.js';
import { arithmetic } from '../../src/tasks/index.js';
import { defineArena, defineJudge, defineRole, defineTaskFamily, isDefinition } from '../../src/api/define.js';

const turn = (role: string, text: string, valid = true): Turn => ({
  index: 0,
  role,
  model: 'm',
  prompt: [],
  completion: [],
  logProbs: [],
  entropy: [],
  selfCertainty: [],
  text,
  action: valid ? { valid: true, value: text } : { valid: false, value: null, error: 'bad' },
});
const episode = (turns: Turn[]): Episode =>
  ({
    id: 'e#0',
    group: 'e',
    member: 0,
    task: { id: 't', family: 'arithmetic', prompt: '1+1=', answer: '2' },
    turns,
  }) as Episode;

describe('plugin definitions', () => {
  it('a per-turn reward judge pays the roles it names and abstains on the rest', () => {
    const length = defineJudge('length', {
      reward: (t, e, ctx) => t.text.length * ((ctx.options.scale as number) ?? 1),
    });
    expect(isDefinition(length)).to.equal(true);
    expect(length.concept).to.equal('judge');
    const batch = [episode([turn('solver', 'abc'), turn('critic', 'y'), turn('solver', 'a')])];
    expect(length.value.make({}, {}).score(batch)).to.deep.equal([[3, null, 1]]);
    const both = length.value.make({ role: ['solver', 'critic'], scale: 2, name: 'len2' }, {});
    expect(both.name).to.equal('len2');
    expect(both.score(batch)).to.deep.equal([[6, 2, 2]]);
  });

  it('a per-turn judge gets the family verifier and refuses a non-finite reward, naming itself', () => {
    const right = defineJudge('right', { reward: (t, e, ctx) => (ctx.verify!(t.task ?? e.task, t.text) ? 1 : 0) });
    const verify = (task: Episode['task'], out: string) => arithmetic.verify(task, out);
    expect(right.value.make({}, { verify }).score([episode([turn('solver', '2'), turn('solver', '3')])])).to.deep.equal(
      [[1, 0]],
    );
    const broken = defineJudge('broken', { reward: () => Number.NaN });
    expect(() => broken.value.make({}, {}).score([episode([turn('solver', '2')])])).to.throw(
      /judge 'broken': reward must be a finite number or null, got NaN/,
    );
    expect(() => right.value.make({ role: [] }, {})).to.throw(/judge 'right': option 'role'/);
  });

  it('refuses names configs cannot use and specs that are not definitions', () => {
    expect(() => defineJudge('My Judge', { reward: () => 0 })).to.throw(/name "My Judge" must be lower-case/);
    expect(() => defineJudge('j', {} as never)).to.throw(/give \{ reward/);
    expect(() => defineRole('r', { render: () => '' } as never)).to.throw(/defineRole\('r'\): give/);
    expect(() => defineTaskFamily({ ...arithmetic, name: 'arith2', verify: undefined } as never)).to.throw(
      /missing: verify/,
    );
  });

  it('a role spec becomes a role of its name, with its token', () => {
    const r = defineRole('echo', {
      token: 'solver',
      render: (o) => `>${o.task.prompt}`,
      parse: (out) => ({ valid: true, value: out }),
    }).value(() => ({ valid: false, value: null }));
    expect(r.kind).to.equal('echo');
    expect(r.token).to.equal('solver');
    expect(r.render({ task: { id: 't', family: 'f', prompt: 'p' } })).to.equal('>p');
    // its optional sampling methods are kept
    const task = { id: 't', family: 'f', prompt: 'p' };
    const s = defineRole('step', {
      render: () => '',
      parse: (out) => ({ valid: true, value: out }),
      maxNewTokens: () => 4,
      stops: () => [','],
    }).value(() => ({ valid: false, value: null }));
    expect([s.maxNewTokens?.({ task }), s.stops?.({ task })]).to.deep.equal([4, [',']]);
    expect(r.stops).to.equal(undefined);
  });

  it('an arena factory must make an arena of the defined kind', () => {
    const wrong = defineArena('mine', () => ({ kind: 'other', roles: {}, play: () => undefined as never }));
    expect(() => wrong.value.make({}, arithmetic)).to.throw(
      /arena 'mine': its factory must return an Arena whose kind is 'mine' \(got kind "other"\)/,
    );
  });
});
