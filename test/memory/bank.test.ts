import { expect } from 'chai';
import { MemoryBank, MemoryOpError } from '../../memory/bank.js';
import { bm25, words } from '../../memory/bm25.js';

const clock = () => {
  let t = 0;
  return () => ++t;
};

describe('memory/bank', () => {
  it('ADD, UPDATE, DELETE and NOOP edit entries with ids never reused and the clock in created/updated', () => {
    const bank = new MemoryBank(undefined, undefined, clock());
    const a = bank.apply({ op: 'ADD', text: 'ann city rome', key: 'ann/city' })!;
    bank.apply({ op: 'ADD', text: 'bob pet cat' });
    bank.apply({ op: 'UPDATE', id: a.id, text: 'ann city oslo' });
    bank.apply({ op: 'NOOP' });
    bank.apply({ op: 'DELETE', id: 'm1' });
    const c = bank.apply({ op: 'ADD', text: 'cy job chef' })!;
    expect(bank.entries).to.deep.equal([
      { id: 'm0', text: 'ann city oslo', key: 'ann/city', created: 1, updated: 3 },
      { id: 'm2', text: 'cy job chef', created: 4, updated: 4 },
    ]);
    expect(c.id).to.equal('m2');
  });

  it('refuses, unchanged, an ADD beyond maxEntries, a text over maxEntryChars, an empty text and an unknown id', () => {
    const bank = new MemoryBank(undefined, { maxEntries: 2, maxEntryChars: 8 }, clock());
    bank.apply({ op: 'ADD', text: 'a' });
    bank.apply({ op: 'ADD', text: 'b' });
    const before = bank.snapshot();
    expect(() => bank.apply({ op: 'ADD', text: 'c' })).to.throw(MemoryOpError, /full: 2 entries/);
    expect(() => bank.apply({ op: 'UPDATE', id: 'm0', text: '123456789' })).to.throw(
      MemoryOpError,
      /9 characters exceeds maxEntryChars 8/,
    );
    expect(() => bank.apply({ op: 'UPDATE', id: 'm0', text: ' ' })).to.throw(MemoryOpError, /non-empty/);
    expect(() => bank.apply({ op: 'DELETE', id: 'm7' })).to.throw(MemoryOpError, /no entry 'm7'/);
    expect(() => bank.apply({ op: 'MOVE' } as never)).to.throw(MemoryOpError, /known: ADD, UPDATE, DELETE, NOOP/);
    expect(bank.snapshot()).to.deep.equal(before);
  });

  it('retrieves the top k by BM25, only entries sharing a word, ties to the most recently updated', () => {
    const bank = new MemoryBank(undefined, undefined, clock());
    for (const t of ['ann city rome', 'bob city oslo', 'ann pet cat', 'ann city lima', 'dee job chef'])
      bank.apply({ op: 'ADD', text: t });
    expect(bank.retrieve('ann city?', 2).map((e) => e.text)).to.deep.equal(['ann city lima', 'ann city rome']);
    expect(bank.retrieve('dee', 5).map((e) => e.text)).to.deep.equal(['dee job chef']);
    expect(bank.retrieve('zed', 5)).to.deep.equal([]);
  });

  it('BM25 matches the formula by hand: a rarer word and a shorter document score higher', () => {
    const docs = [words('a b'), words('a c c'), words('d')];
    const [s0, s1] = bm25(docs, ['c']);
    const idf = Math.log(1 + (3 - 1 + 0.5) / 1.5);
    expect(s1).to.be.closeTo((idf * 2 * 2.2) / (2 + 1.2 * (0.25 + (0.75 * 3) / 2)), 1e-12);
    expect(s0).to.equal(0);
    const [a0, a1] = bm25(docs, ['a']);
    expect(a0).to.be.greaterThan(a1);
  });

  it('a fork and a snapshot are independent of the bank they came from', () => {
    const bank = new MemoryBank(undefined, undefined, clock());
    bank.apply({ op: 'ADD', text: 'ann city rome' });
    const snap = bank.snapshot();
    const fork = bank.fork();
    fork.apply({ op: 'UPDATE', id: 'm0', text: 'ann city oslo' });
    fork.apply({ op: 'ADD', text: 'bob pet cat' });
    expect(bank.entries.map((e) => e.text)).to.deep.equal(['ann city rome']);
    expect(snap.entries[0].text).to.equal('ann city rome');
    expect(fork.entries.map((e) => e.id)).to.deep.equal(['m0', 'm1']);
    bank.apply({ op: 'ADD', text: 'cy job chef' });
    expect(bank.entries[1].id).to.equal('m1');
  });
});
