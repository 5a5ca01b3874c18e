import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { extractAnswer, math, mathEqual } from '../../src/tasks/math/index.js';
import { parseScalar } from '../../src/tasks/math/equal.js';
import { readAnswer } from '../../src/tasks/math/latex.js';
import { Rng } from '../../src/util/rng.js';

/**
 * [reference, completion, expected reward, where the case comes from]. The cases are the
 * documented behaviour of math-verify (its tests), verl's gsm8k/math rewards and TRL's
 * accuracy_reward; docs/data.md lists them.
 */
export const MATH_CASES: [string, string, 0 | 1, string][] = [
  ['-5', '-5', 1, 'math-verify tests/test_all.py number extraction'],
  ['7425000', '7,425,000', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000', '1 000', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000', '1000.0', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000.0', '1,000.0', 1, 'math-verify tests/test_all.py number extraction'],
  ['0.4', '.4', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000.99', '$1,000.99', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000.99', '1,000.99$', 1, 'math-verify tests/test_all.py number extraction'],
  ['1000.99', 'the number is not 10 which is 1,000.99\u20ac', 1, 'math-verify tests/test_all.py number extraction'],
  ['2', 'AZYUK2A', 0, 'math-verify tests/test_all.py number extraction'],
  ['10/9', '\\frac{10}{9}', 1, 'math-verify tests/test_all.py simple fractions'],
  ['-10/9', '-\\frac{10}{9}', 1, 'math-verify tests/test_all.py simple fractions'],
  ['$[0,1)$', '$[0,1)$', 1, 'math-verify tests/test_all.py sets (intervals)'],
  ['$[0,9)$', '$[0,1)$', 0, 'math-verify tests/test_all.py sets (intervals)'],
  ['$(0,9)$', '$[0,9)$', 0, 'math-verify tests/test_all.py sets (intervals)'],
  ['$1/3$', '$\\frac13 $', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1$', '$\\frac3{3} $', 1, 'math-verify tests/test_all.py latex notation'],
  ['$\\sqrt{3}$', '$\\sqrt3 $', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$\\cfrac{1}{3} $', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$\\dfrac{1}{3} $', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$\\left( \\frac{1}{3} \\right)$', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$\\boxed{\\frac{1}{3}}$', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$\\frac{1}{3} \\text{meters}$', 1, 'math-verify tests/test_all.py latex notation'],
  ['$1/3$', '$k = \\frac{1}{3}$', 1, 'math-verify tests/test_all.py latex notation'],
  ['$28\\%$', '28 percent', 1, 'math-verify tests/test_all.py percent notation'],
  ['$28\\%$', '28 %', 1, 'math-verify tests/test_all.py percent notation'],
  ['$28\\%$', '$\\boxed{28}$ pct', 1, 'math-verify tests/test_all.py percent notation'],
  ['$28\\%$', '28', 1, 'math-verify tests/test_all.py percent notation'],
  ['$0.28$', '28', 0, 'math-verify tests/test_all.py percent notation'],
  ['$28/100$', '28', 0, 'math-verify tests/test_all.py percent notation'],
  ['$28$', '28/100', 0, 'math-verify tests/test_all.py percent notation'],
  ['$3\\sqrt{13}$', '\\boxed{3\\sqrt{13}}.', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$\\frac{14}{3}$', '=\\boxed{\\frac{14}{3}}$', 1, 'math-verify tests/test_all.py MATH answers'],
  [
    '$\\text{Evelyn}$',
    'Therefore, $\\boxed{\\text{Evelyn}}$ is our answer.',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  ['$90^\\circ$', '$\\boxed{90^\\circ}.$', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$15\\mbox{ cm}^2$', '\\boxed{15\\mbox{ cm}^2}.', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$-2,1$', 'the only integer roots are $\\boxed{-2,1}.$', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$(6,31,-1)$', '$(p,q,r) = \\boxed{(6,31,-1)}.$', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$1 \\pm \\sqrt{19}$', '$x = \\boxed{1 \\pm \\sqrt{19}}.$', 1, 'math-verify tests/test_all.py MATH answers'],
  [
    '$\\{1\\pm\\sqrt{5},-2\\}$',
    'the answer is $\\boxed{\\{1\\pm\\sqrt{5},-2\\}}.$',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  [
    '$2 \\sin b \\cos a$',
    '\\[\\sin (a + b) - \\sin (a - b) = \\boxed{2 \\sin b \\cos a}.\\]',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  [
    '$125$ miles',
    'The distance is $\\boxed{125\\textnormal{ miles}}.$',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  [
    '$[-1, -\\frac{1}{2}) \\cup (-\\frac{1}{2}, 0) \\cup (0, 1) \\cup (1, \\infty)$',
    'The solution set is $\\boxed{[-1, -\\tfrac12) \\cup (-\\tfrac12, 0) \\cup (0, 1) \\cup (1, \\infty)}.$',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  [
    '$\\sqrt{2}+\\sqrt{5}$',
    'The answer is $\\boxed{\\sqrt 2+\\sqrt 5}$',
    1,
    'math-verify tests/test_all.py MATH answers',
  ],
  ['$\\frac{9}{4}\\pi$', 'Therefore $\\boxed{\\frac94\\pi}$.', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$14{,}916$', 'Therefore, $\\boxed{14{,}916}$ is our answer.', 1, 'math-verify tests/test_all.py MATH answers'],
  ['$\\frac{1}{12}$', '$0.0833333333333333$', 1, 'math-verify tests/test_all.py qwen parser cases'],
  ['$(1,\\frac{9}{2})$', '$(1,4.5)$', 1, 'math-verify tests/test_all.py qwen parser cases'],
  ['$\\frac{x+2}{7}$', '$\\frac{x}{7}+\\frac{2}{7}$', 1, 'math-verify tests/test_all.py qwen parser cases'],
  ['$\\tan^2(y)+1$', '$\\sec^2(y)$', 1, 'math-verify tests/test_all.py qwen parser cases'],
  ['$k=1$', '$1$', 1, 'math-verify tests/test_all.py relations'],
  ['$1$', '$k=1$', 1, 'math-verify tests/test_all.py relations'],
  ['$2x + z = 1$', '$1$', 0, 'math-verify tests/test_all.py relations'],
  ['$11$', '$x\\approx11$', 1, 'math-verify tests/test_all.py relations'],
  ['\\frac{1}{3}', 'My answer is \\boxed{\\frac{1}{3}}', 1, 'TRL accuracy_reward docstring'],
  ['\\frac{1}{3}', 'My answer is \\boxed{\\frac{1}{2}}', 0, 'TRL accuracy_reward docstring'],
  [
    '72',
    'Natalia sold 48/2 = 24 clips in May.\n#### 72',
    1,
    'verl gsm8k.py (#### strict, last number flexible, commas removed)',
  ],
  ['72', 'She sold 72 clips', 1, 'verl gsm8k.py (#### strict, last number flexible, commas removed)'],
  ['72', '#### 7,2', 0, 'verl gsm8k.py (#### strict, last number flexible, commas removed)'],
  ['1234', '#### 1,234', 1, 'verl gsm8k.py (#### strict, last number flexible, commas removed)'],
  ['18', 'The answer is 18.', 1, 'verl math.py extract_answer ("the answer is", sentence end)'],
  ['18', 'The answer is 18. I hope 19', 1, 'verl math.py extract_answer ("the answer is", sentence end)'],
  [
    '0.5',
    '\\boxed{\\frac{1}{2}}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '\\frac{1}{2}',
    '\\boxed{0.5}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '1/2',
    'the answer is 0.5',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '50\\%',
    '\\boxed{0.5}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '0.5',
    '\\boxed{50\\%}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '5',
    '\\boxed{5\\text{ dollars}}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '5',
    '\\boxed{6}',
    0,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    'x^2+2x+1',
    '\\boxed{(x+1)^2}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    'x^2+2x+1',
    '\\boxed{(x+1)^3}',
    0,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '\\frac{\\sqrt{3}}{2}',
    '\\boxed{\\frac{1}{2}\\sqrt{3}}',
    1,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '\\pi',
    '\\boxed{3.14}',
    0,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
  [
    '2',
    '\\boxed{2}\\boxed{3}',
    0,
    'issue 50 (numerically equal forms, percent where asked, units) and math-verify sympy equality',
  ],
];

const task = (answer: string) => ({ id: 't', family: 'math', prompt: 'p', answer });

describe('tasks/math', () => {
  describe('verify, on the cases math-verify, verl and TRL document', () => {
    for (const [gold, pred, expected, source] of MATH_CASES)
      it(`${expected ? 'accepts' : 'refuses'} ${JSON.stringify(pred.slice(0, 60))} for ${JSON.stringify(gold.slice(0, 40))} (${source})`, () => {
        expect(math.verify(task(gold), pred) ? 1 : 0).to.equal(expected);
      });
  });

  it('docs/data.md lists every case of the table, with its reward and source', () => {
    const doc = readFileSync('docs/data.md', 'utf8');
    const cell = (x: string) =>
      '`' + (x.length > 70 ? x.slice(0, 67) + '...' : x).replace(/\n/g, '\\n').replace(/\|/g, '\\|') + '`';
    for (const [gold, pred, expected, source] of MATH_CASES)
      expect(doc, `${gold} / ${pred}`).to.contain(`| ${cell(gold)} | ${cell(pred)} | ${expected} | ${source} |`);
  });

  it('takes the answer from the last \\boxed{}, then a marker, then a $ span, then the last number', () => {
    expect(extractAnswer('first \\boxed{1} then \\boxed{\\frac{2}{3}} done')).to.equal('\\frac{2}{3}');
    expect(extractAnswer('work 3 + 4 = 7\n#### 7')).to.equal('7');
    expect(extractAnswer('so $x = 4$ and then $y = 5$ finally')).to.equal('y = 5');
    expect(extractAnswer('I think 12 apples, then 15 pears')).to.equal('15');
    expect(extractAnswer('no numbers at all')).to.equal(undefined);
    expect(math.parseAnswer('nothing here')).to.deep.include({ valid: false });
  });

  it('reads a MATH reference solution through its \\boxed{}', () => {
    expect(math.verify(task('so the sum is $\\boxed{\\frac{3}{4}}$.'), 'The answer is 0.75')).to.equal(true);
  });

  it('never lets model text call anything but arithmetic and a few named functions', () => {
    for (const expr of ['import(1)', 'evaluate("1+1")', 'createUnit("x")', 'f(2)', 'a.b', 'x = 2', '[1, 2]', '"2"'])
      expect(parseScalar(expr), expr).to.equal(undefined);
    expect(parseScalar('sqrt(2) x + sin(y)^2')?.vars).to.deep.equal(['x', 'y']);
    // such text is compared as text, so it matches only the same text
    expect(mathEqual('2', '\\boxed{evaluate("1+1")}')).to.equal(false);
    expect(readAnswer('\\text{Evelyn}')).to.deep.equal({ kind: 'text', text: 'evelyn' });
  });

  it('generates fraction sums whose reference answers in lowest terms its verifier accepts', () => {
    const rng = new Rng(5);
    const d = math.validate({ terms: 3, maxDenominator: 6 });
    for (let i = 0; i < 30; i++) {
      const t = math.generate(rng, d, i);
      // the reference from exact rational arithmetic on the prompt's fractions
      const terms = [...t.prompt.matchAll(/([+-]?) ?(\d+)\/(\d+)/g)].map(
        (m) => (m[1] === '-' ? -1 : 1) * (Number(m[2]) / Number(m[3])),
      );
      expect(terms).to.have.length(3);
      expect(mathEqual(t.answer!, String(terms.reduce((a, b) => a + b, 0)))).to.equal(true);
      expect(t.answer).to.not.match(/\\frac\{(\d*[02468])\}\{\d*[02468]\}/); // lowest terms: never even over even
      expect(math.verify(t, `so \\boxed{${t.answer}}`)).to.equal(true);
    }
    expect(() => math.validate({ terms: 9 })).to.throw(/tasks.difficulty: terms/);
  });

  it('refuses to verify a task without an answer or of another family', () => {
    expect(() => math.verify({ id: 't', family: 'math', prompt: 'p' }, '1')).to.throw(/no answer/);
    expect(() => math.verify({ ...task('1'), family: 'arithmetic' }, '1')).to.throw(/family 'arithmetic'/);
  });
});
