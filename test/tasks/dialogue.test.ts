import { expect } from 'chai';
import { answerFrom, dialogue, factsAfter, readDialogue, readFact } from '../../src/tasks/dialogue.js';
import { Rng } from '../../src/util/rng.js';

const make = (seed: number, d: Record<string, unknown> = {}, n = 50) => {
  const rng = new Rng(seed);
  const v = dialogue.validate(d);
  return Array.from({ length: n }, (_, i) => dialogue.generate(rng, v, i));
};

describe('tasks/dialogue', () => {
  it('is seeded, and the horizon knob sets the sessions and turns', () => {
    expect(make(3)).to.deep.equal(make(3));
    expect(make(3)).to.not.deep.equal(make(4));
    const [t] = make(1, { sessions: 5, turnsPerSession: 2, questions: 3 }, 1);
    const d = readDialogue(t);
    expect(d.sessions.map((s) => s.length)).to.deep.equal([2, 2, 2, 2, 2]);
    expect(d.questions).to.have.length(3);
  });

  it('answers need the latest value, and a removed fact is unknown', () => {
    const tasks = make(2, { sessions: 16 }, 200);
    let removed = 0,
      changed = 0;
    for (const t of tasks) {
      const d = readDialogue(t);
      const turns = d.sessions.flat();
      const facts = factsAfter(turns);
      for (const q of d.questions) {
        expect(q.answer).to.equal(answerFrom(facts, q.text));
        const slot = q.text.slice(0, -1);
        const about = turns.map(readFact).filter((f) => f?.slot === slot);
        expect(about.length, `${t.id} asks about ${slot}, never mentioned`).to.be.greaterThan(0);
        if (q.answer === 'unknown') removed++;
        if (new Set(about.map((f) => f!.value)).size > 1) changed++;
      }
    }
    expect(removed).to.be.greaterThan(50);
    expect(changed).to.be.greaterThan(200);
  });

  it('validates its knobs by name and verifies answers as data', () => {
    expect(() => dialogue.validate({ sessions: 0 })).to.throw(/sessions/);
    expect(() => dialogue.validate({ people: 9 })).to.throw(/people/);
    expect(() => dialogue.validate({ colour: 1 })).to.throw(/colour/);
    const q = { id: 'x/q0', family: 'dialogue', prompt: 'ann city?', answer: 'oslo' };
    expect(dialogue.verify(q, ' oslo ')).to.equal(true);
    expect(dialogue.verify(q, 'rome')).to.equal(false);
    expect(dialogue.parseAnswer('process.exit()').valid).to.equal(false);
    expect(() => readDialogue({ id: 'a', family: 'arithmetic', prompt: '1+1=', answer: '2' })).to.throw(
      /not a dialogue/,
    );
  });
});
