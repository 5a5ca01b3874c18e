import { expect } from 'chai';
import { CharTokenizer, DEFAULT_CHARS, DEFAULT_ROLES } from '../src/tokenizer/index.js';

describe('tokenizer/CharTokenizer', () => {
  const tok = new CharTokenizer();

  describe('default vocabulary', () => {
    it('lays out ids as pad 0, bos 1, eos 2, then one per role, then one per character', () => {
      expect([tok.pad, tok.bos, tok.eos]).to.deep.equal([0, 1, 2]);
      DEFAULT_ROLES.forEach((role, i) => expect(tok.roleToken(role), role).to.equal(3 + i));
      const first = 3 + DEFAULT_ROLES.length;
      expect(tok.firstCharId).to.equal(first);
      expect(tok.encode(' ')).to.deep.equal([first]); // DEFAULT_CHARS starts at ASCII 32
      expect(tok.encode('~')).to.deep.equal([first + 94]);
      expect(tok.size).to.equal(3 + DEFAULT_ROLES.length + 95);
      expect(DEFAULT_CHARS).to.have.length(95);
    });

    it('names every token in decode(withSpecial)', () => {
      const all = Array.from({ length: tok.size }, (_, i) => i);
      const text = tok.decode(all, true);
      expect(text).to.equal('<pad><bos><eos>' + DEFAULT_ROLES.map((r) => `<role:${r}>`).join('') + DEFAULT_CHARS);
    });
  });

  describe('encode / decode', () => {
    it('round-trips text with spaces and punctuation', () => {
      for (const text of [
        '',
        'a',
        'Hello, world!',
        '  12 + 34 = 46.  ',
        `"quotes" & 'apostrophes'; {braces} [x] (y) ~\\|`,
        DEFAULT_CHARS,
      ]) {
        const ids = tok.encode(text);
        expect(ids, text).to.have.length(text.length);
        expect(
          ids.every((id) => id >= tok.firstCharId && id < tok.size),
          text,
        ).to.equal(true);
        expect(tok.decode(ids), text).to.equal(text);
      }
    });

    it('gives distinct characters distinct ids', () => {
      const ids = tok.encode(DEFAULT_CHARS);
      expect(new Set(ids).size).to.equal(DEFAULT_CHARS.length);
    });

    it('names an unknown character and its position', () => {
      expect(() => tok.encode('abcé')).to.throw(/"é".*position 3/);
      expect(() => tok.encode('\n')).to.throw(/"\\n".*position 0/);
    });

    it('counts positions in characters, not UTF-16 units', () => {
      const t = new CharTokenizer({ chars: 'ab😀', roles: [] });
      expect(t.encode('a😀b')).to.deep.equal([3, 5, 4]);
      expect(t.decode(t.encode('a😀b'))).to.equal('a😀b');
      expect(() => t.encode('😀😀x')).to.throw(/"x".*position 2/);
    });

    it('drops special and role tokens unless asked for them', () => {
      const ids = [tok.bos, tok.roleToken('solver'), ...tok.encode('hi'), tok.eos, tok.pad];
      expect(tok.decode(ids)).to.equal('hi');
      expect(tok.decode(ids, true)).to.equal('<bos><role:solver>hi<eos><pad>');
    });

    it('rejects ids outside the vocabulary', () => {
      expect(() => tok.decode([tok.size])).to.throw(/outside vocabulary/);
      expect(() => tok.decode([-1])).to.throw(/outside vocabulary/);
      expect(() => tok.decode([1.5])).to.throw(/outside vocabulary/);
    });
  });

  describe('roles and prompts', () => {
    it('prompt(text, role) is BOS, the role token, then the text', () => {
      const ids = tok.prompt('2+2', 'critic');
      expect(ids).to.deep.equal([1, tok.roleToken('critic'), ...tok.encode('2+2')]);
      expect(ids[1]).to.equal(3 + DEFAULT_ROLES.indexOf('critic'));
    });

    it('prompt(text) without a role is BOS then the text', () => {
      expect(tok.prompt('ok')).to.deep.equal([1, ...tok.encode('ok')]);
    });

    it('an unknown role is an error listing the known ones', () => {
      expect(() => tok.roleToken('oracle')).to.throw(/'oracle'.*proposer, solver, critic, judge, memory/);
      expect(() => tok.prompt('x', 'oracle')).to.throw(/unknown role 'oracle'/);
    });

    it('custom roles come right after the specials, in order', () => {
      const t = new CharTokenizer({ chars: 'xy', roles: ['a', 'b'] });
      expect(t.roleToken('a')).to.equal(3);
      expect(t.roleToken('b')).to.equal(4);
      expect(t.encode('yx')).to.deep.equal([6, 5]);
      expect(t.size).to.equal(7);
    });
  });

  describe('construction', () => {
    it('rejects a character listed twice, naming it', () => {
      expect(() => new CharTokenizer({ chars: 'abca', roles: [] })).to.throw(/"a" listed twice/);
    });

    it('rejects a role listed twice, naming it', () => {
      expect(() => new CharTokenizer({ chars: 'ab', roles: ['x', 'y', 'x'] })).to.throw(/role 'x' listed twice/);
    });

    it('fromSpec round-trips through JSON', () => {
      const t = new CharTokenizer({ chars: 'abc ', roles: ['solver'] });
      const copy = CharTokenizer.fromSpec(JSON.parse(JSON.stringify(t.spec)));
      expect(copy.size).to.equal(t.size);
      expect(copy.encode('cab a')).to.deep.equal(t.encode('cab a'));
      expect(copy.roleToken('solver')).to.equal(t.roleToken('solver'));
    });

    it('fromSpec rejects malformed specs', () => {
      const bad: unknown[] = [
        null,
        undefined,
        42,
        'abc',
        {},
        { chars: 'abc' },
        { roles: [] },
        { chars: 5, roles: [] },
        { chars: 'abc', roles: 'solver' },
        { chars: 'abc', roles: ['solver', 3] },
      ];
      for (const spec of bad) {
        expect(() => CharTokenizer.fromSpec(spec), JSON.stringify(spec)).to.throw(/spec must be/);
      }
    });

    it('fromSpec still rejects duplicates inside a well-formed spec', () => {
      expect(() => CharTokenizer.fromSpec({ chars: 'aa', roles: [] })).to.throw(/listed twice/);
    });
  });
});
