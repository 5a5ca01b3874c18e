/**
 * An answer's text (LaTeX or plain) read into what can be compared: text, a scalar expression
 * in mathjs's syntax, an interval or tuple, or a set. The normalisations are the ones
 * math-verify and verl's math reward apply (facts, not their code): `$`/`\(`/`\[` and
 * `\left`/`\right` dropped, `\dfrac`/`\tfrac`/`\cfrac` as `\frac`, `\frac12` as `\frac{1}{2}`,
 * `\sqrt3` as `\sqrt{3}`, degrees, currency and `\text{}` units dropped, thousands
 * separators (`1,234`, `1{,}234`, `1\,234`) removed, a percent sign remembered, and of
 * `k = 5` the last side kept. The expression is text for mathjs's parser, never for
 * JavaScript.
 */

/** A scalar, its mathjs text; `percent` when written with a percent sign. */
export interface Scalar {
  kind: 'expr';
  expr: string;
  percent: boolean;
}

/** What an answer reads as. */
export type Answer =
  | Scalar
  | { kind: 'text'; text: string }
  | { kind: 'interval'; open: string; close: string; items: Answer[] }
  | { kind: 'union'; parts: Answer[] }
  | { kind: 'set'; items: Answer[] };

const TEXT_COMMANDS = '(?:text|textbf|textit|textnormal|textrm|mbox|mathrm|mathbf|operatorname)';

/** The index of the bracket closing the one at `open` (nested ones counted, `\\{` skipped), or -1. */
export function matching(text: string, open: number, pair = '{}'): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] === pair[0]) depth++;
    else if (text[i] === pair[1] && --depth === 0) return i;
  }
  return -1;
}

/** Strips what only styles the answer, in math-verify's and verl's normalisation. */
export function clean(raw: string): string {
  let s = raw.trim();
  s = s
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '');
  s = s.replace(/\\(?:displaystyle|left|right|big|Big|bigg|Bigg)(?![a-zA-Z])/g, '');
  s = s.replace(/\\[!,;:]|~/g, (m) => (m === '\\,' ? '\\,' : ' '));
  s = s.replace(/\{,\}/g, ',');
  s = s.replace(/\^\s*\{?\s*\\circ\s*\}?|°/g, '');
  s = s.replace(/\\[dtc]frac/g, '\\frac');
  s = s.replace(/\\frac\s*(\d)\s*(\d)/g, '\\frac{$1}{$2}').replace(/\\frac\s*(\d)\s*\{/g, '\\frac{$1}{');
  s = s.replace(/\\frac\s*\{([^{}]*)\}\s*(\d)/g, '\\frac{$1}{$2}');
  s = s.replace(/\\sqrt\s*(\d+|[a-zA-Z])/g, '\\sqrt{$1}');
  s = s.replace(/\\\$|\$|€|£|¥/g, '');
  return s.trim();
}

/** Reads an answer's text (the part extract.ts found, or a reference answer). */
export function readAnswer(raw: string): Answer {
  let s = clean(raw);
  // a whole answer in \text{} is a word answer (\text{Evelyn}); beside math it is a unit
  const whole = new RegExp(`^\\\\${TEXT_COMMANDS}\\s*\\{([^{}]*)\\}$`).exec(s);
  if (whole) return { kind: 'text', text: plain(whole[1]) };
  s = s.replace(new RegExp(`\\\\${TEXT_COMMANDS}\\s*\\{[^{}]*\\}(\\^\\{?\\d\\}?)?`, 'g'), ' ').trim();
  s = s.replace(/\\,/g, '');
  let percent = false;
  s = s.replace(/\\?%|\s*\b(?:percentage|percent|pct)\b/gi, () => {
    percent = true;
    return '';
  });
  s = lastSide(s).replace(/[.\s]+$/, '');
  // a number then words is a number with its unit ("125 miles", "2.74 dollars")
  const unit = /^(-?[\d.,]+)\s*[a-zA-Z²³][a-zA-Z²³\s.]*$/.exec(s);
  if (unit) s = unit[1];
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  else if (/^-?\d{1,3}( \d{3})+(\.\d+)?$/.test(s)) s = s.replace(/ /g, '');
  return structure(s, percent);
}

// `x = 5`, `k=\frac13`, `x \approx 2.5`, `x \in [0, 1)`: the answer is the last side when the
// first is a name (a variable, f(x)); an equation between expressions is kept whole.
function lastSide(s: string): string {
  const parts = s.split(/=|\\approx|\\in(?![a-zA-Z])/);
  if (parts.length < 2) return s;
  const lhs = parts[0].trim();
  return /^(?:\\?[a-zA-Z]+(?:_\{?\w+\}?)?(?:\s*\([a-z]\))?)$/.test(lhs) ? parts.at(-1)!.trim() : s;
}

function plain(text: string): string {
  return text.replace(/\s+/g, '').toLowerCase();
}

function structure(s: string, percent: boolean): Answer {
  const union = splitTop(s, /\\cup/y);
  if (union.length > 1) {
    const parts = union.map((p) => structure(p.trim(), false));
    return parts.every((p) => p.kind === 'interval' || p.kind === 'set') ? { kind: 'union', parts } : text(s);
  }
  if (s.startsWith('\\{') && s.endsWith('\\}'))
    return { kind: 'set', items: items(s.slice(2, -2)).map((x) => structure(x, false)) };
  const open = s[0];
  if ((open === '(' || open === '[') && (s.endsWith(')') || s.endsWith(']'))) {
    const close = matching(s, 0, open === '(' ? '()' : '[]');
    // only when the brackets enclose everything: `(1+2)*3` is a scalar
    const inner = items(s.slice(1, -1));
    if ((close === s.length - 1 || close < 0) && inner.length > 1)
      return { kind: 'interval', open, close: s.at(-1)!, items: inner.map((x) => structure(x, false)) };
  }
  const list = items(s);
  if (list.length > 1) return { kind: 'set', items: list.map((x) => structure(x, false)) };
  const pm = s.split('\\pm');
  if (pm.length === 2)
    return {
      kind: 'set',
      items: [`${pm[0]}+${pm[1]}`, `${pm[0]}-${pm[1]}`].map((x) => structure(x, false)),
    };
  const expr = toMath(s);
  return expr === undefined ? text(s) : { kind: 'expr', expr, percent };
}

const text = (s: string): Answer => ({ kind: 'text', text: plain(s.replace(/\\[a-zA-Z]+/g, '')) || plain(s) });

/** The top-level parts of `s` split at commas (none inside brackets or braces). */
function items(s: string): string[] {
  return splitTop(s, /,/y).map((x) => x.trim());
}

function splitTop(s: string, sep: RegExp): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && (s[i + 1] === '{' || s[i + 1] === '}')) {
      depth += s[i + 1] === '{' ? 1 : -1;
      i++;
      continue;
    }
    if ('({['.includes(c)) depth++;
    else if (')}]'.includes(c)) depth--;
    sep.lastIndex = i;
    if (depth === 0 && sep.test(s)) {
      out.push(s.slice(from, i));
      from = sep.lastIndex;
      i = from - 1;
    }
  }
  out.push(s.slice(from));
  return out;
}

const FUNCTIONS: Record<string, string> = {
  sin: 'sin',
  cos: 'cos',
  tan: 'tan',
  sec: 'sec',
  csc: 'csc',
  cot: 'cot',
  arcsin: 'asin',
  arccos: 'acos',
  arctan: 'atan',
  ln: 'log',
  log: 'log',
  exp: 'exp',
};
const GREEK = new Set(
  'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi rho sigma tau upsilon phi chi psi omega'.split(
    ' ',
  ),
);

/**
 * A LaTeX scalar as mathjs text: `\frac{a}{b}` → `((a)/(b))`, `\sqrt[n]{x}` → `nthRoot((x),(n))`,
 * `\sqrt{x}` → `sqrt((x))`, `^{..}` → `^(..)`, `\cdot`/`\times` → `*`, `\pi` → `pi`,
 * `\infty` → `Infinity`, `\sin^2 x` → `(sin(x))^2`, braces as parentheses. Undefined for
 * anything else with a backslash (a command it does not know), so such answers compare as text.
 */
export function toMath(latex: string): string | undefined {
  let out = '';
  for (let i = 0; i < latex.length;) {
    const c = latex[i];
    if (c === '\\') {
      const name = /^\\([a-zA-Z]+)/.exec(latex.slice(i))?.[1];
      if (name === undefined) return undefined;
      i += name.length + 1;
      if (name === 'frac') {
        const a = group(latex, i);
        const b = a && group(latex, a.end);
        if (!a || !b) return undefined;
        const [x, y] = [toMath(a.body), toMath(b.body)];
        if (x === undefined || y === undefined) return undefined;
        out += `((${x})/(${y}))`;
        i = b.end;
      } else if (name === 'sqrt') {
        let root: string | undefined;
        while (latex[i] === ' ') i++;
        if (latex[i] === '[') {
          const close = matching(latex, i, '[]');
          if (close < 0) return undefined;
          root = toMath(latex.slice(i + 1, close));
          if (root === undefined) return undefined;
          i = close + 1;
        }
        const a = group(latex, i);
        const x = a && toMath(a.body);
        if (!a || x === undefined) return undefined;
        out += root === undefined ? `sqrt((${x}))` : `nthRoot((${x}),(${root}))`;
        i = a.end;
      } else if (name === 'cdot' || name === 'times') out += '*';
      else if (name === 'div') out += '/';
      else if (name === 'pi') out += ' pi ';
      else if (name === 'infty') out += ' Infinity ';
      else if (GREEK.has(name)) out += ` ${name} `;
      else if (Object.hasOwn(FUNCTIONS, name)) {
        // \sin^2 x, \sin(x), \sin x: the power goes on the function's value
        let power = '';
        const p = /^\s*\^\s*(\{[^{}]*\}|\d)/.exec(latex.slice(i));
        if (p) {
          power = p[1].replace(/[{}]/g, '');
          i += p[0].length;
        }
        while (latex[i] === ' ') i++;
        let arg: string | undefined;
        if (latex[i] === '(' || latex[i] === '{') {
          const close = matching(latex, i, latex[i] === '(' ? '()' : '{}');
          if (close < 0) return undefined;
          arg = toMath(latex.slice(i + 1, close));
          i = close + 1;
        } else {
          const m = /^(\\[a-zA-Z]+|[a-zA-Z0-9.]+)/.exec(latex.slice(i));
          if (!m) return undefined;
          arg = toMath(m[0]);
          i += m[0].length;
        }
        if (arg === undefined) return undefined;
        const call = `${FUNCTIONS[name]}(${arg})`;
        out += power ? `(${call})^(${toMath(power)})` : call;
      } else return undefined;
    } else if (c === '{') {
      out += '(';
      i++;
    } else if (c === '}') {
      out += ')';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// `{...}` or one character: the argument of \frac and \sqrt
function group(s: string, i: number): { body: string; end: number } | undefined {
  while (s[i] === ' ') i++;
  if (s[i] === '{') {
    const close = matching(s, i);
    return close < 0 ? undefined : { body: s.slice(i + 1, close), end: close + 1 };
  }
  return i < s.length ? { body: s[i], end: i + 1 } : undefined;
}
