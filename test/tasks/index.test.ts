import { expect } from 'chai';
import { TASK_FAMILIES, taskFamily } from '../../src/registry.js';
import { Rng } from '../../src/util/rng.js';
import { arithmetic, strings } from '../../src/tasks/index.js';

describe('tasks/registry', () => {
  it('lists arithmetic, strings, dialogue, math, countdown and word-problems under their own names', () => {
    expect(Object.keys(TASK_FAMILIES)).to.deep.equal([
      'arithmetic',
      'strings',
      'dialogue',
      'math',
      'countdown',
      'word-problems',
    ]);
    expect(taskFamily('arithmetic')).to.equal(arithmetic);
    expect(taskFamily('strings')).to.equal(strings);
    for (const [name, family] of Object.entries(TASK_FAMILIES)) expect(family.name).to.equal(name);
  });

  it('rejects unknown names, listing the known ones', () => {
    expect(() => taskFamily('x')).to.throw("unknown task family 'x'; known: arithmetic, strings");
    expect(() => taskFamily('constructor')).to.throw(/unknown task family 'constructor'/);
  });

  it('every family accepts its defaults and verifies its own answers', () => {
    for (const family of Object.values(TASK_FAMILIES)) {
      const d = family.validate(family.defaults);
      expect(d).to.deep.equal(family.defaults);
      const rng = new Rng(3);
      for (let i = 0; i < 20; i++) {
        const task = family.generate(rng, d, i);
        expect(task.family).to.equal(family.name);
        expect(task.id).to.equal(`${family.name}-${i}`);
        expect(family.verify(task, ` ${task.answer}\n`), task.prompt).to.equal(true);
      }
    }
  });
});
