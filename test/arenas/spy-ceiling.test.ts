import { expect } from 'chai';
import { clueLetters, SPY_GROUPS, spyDeal } from '../../arenas/spy.js';
import { oddLetterSeat } from '../../arenas/spy-corpus.js';
import { meanVoteCeilings, spyMix, uniformClues, voteCeilings } from '../../arenas/spy-ceiling.js';
import { Rng } from '../../src/util/rng.js';

describe('spy vote ceilings', () => {
  it("match the arena's deals: the rule voter against uniform clues, simulated, reads the exact figure", () => {
    const exact = meanVoteCeilings(uniformClues, uniformClues);
    const rng = new Rng(5);
    let hits = 0;
    let votes = 0;
    for (let i = 0; i < 6000; i++) {
      const deal = spyDeal(`ceiling-${i}`, 4);
      const clues = deal.words.map((w) => {
        const l = clueLetters(w, 'word');
        return l[rng.int(l.length)];
      });
      for (let seat = 0; seat < 4; seat++) {
        if (seat === deal.spy) continue;
        const others = [0, 1, 2, 3].filter((s) => s !== seat);
        const vote = oddLetterSeat(deal.words[seat], clues, seat) ?? others[rng.int(3)];
        hits += vote === deal.spy ? 1 : 0;
        votes++;
      }
    }
    expect(hits / votes).to.be.closeTo(exact.rule, 0.02);
    expect(exact.rule).to.be.closeTo(0.487, 0.001);
  });

  it('order the voters: the best voter at least the rule, the team at least the best voter given uniform civilians', () => {
    const c = meanVoteCeilings(uniformClues, uniformClues);
    expect(c.bayes).to.be.greaterThan(c.rule);
    expect(c.team).to.be.greaterThan(c.bayes);
    expect(c.bayes).to.be.lessThan(1);
  });

  it("a spy that always gives the civilians' letter leaves a third, unless they agree on another; one that never blends is always found", () => {
    const copy = voteCeilings(new Map([['a', 1]]), new Map([['a', 1]]), 'bag');
    expect(copy.bayes).to.be.closeTo(1 / 3, 1e-12);
    expect(copy.rule).to.be.closeTo(1 / 3, 1e-12);
    expect(copy.team).to.equal(1); // civilians who all say b or g expose a spy that says a
    expect(copy.blend).to.equal(1);
    const apart = voteCeilings(uniformClues('bag'), new Map([['d', 1]]), 'bag');
    expect(apart.bayes).to.be.closeTo(1, 1e-12);
    expect(apart.rule).to.be.closeTo(1, 1e-12);
    expect(apart).to.deep.include({ team: 1, blend: 0 });
  });

  it("mix the spy's word over the group's other three words", () => {
    const mix = spyMix(uniformClues, 'bag');
    // dab, gab, bad: b in all three, a in all three, d in two, g in one; each word's letters uniform over 3
    expect(mix.get('g')).to.be.closeTo(1 / 9, 1e-12);
    expect(mix.get('d')).to.be.closeTo(2 / 9, 1e-12);
    expect([...mix.values()].reduce((a, b) => a + b)).to.be.closeTo(1, 1e-12);
    expect(() => spyMix(uniformClues, 'zzz')).to.throw(/not a word/);
    expect(SPY_GROUPS.flat()).to.include('bag');
  });
});
