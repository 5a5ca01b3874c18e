/**
 * Whether two answers are the same, as math-verify's `verify(gold, pred)` decides for the
 * cases it documents: numbers equal to 6 significant places after rounding (`0.5`, `1/2`,
 * `\frac{1}{2}`), a percent read both as itself and over 100 (`50\%` is 50 and 0.5), symbolic
 * expressions equal when mathjs simplifies their difference to 0 or, failing that, when it
 * vanishes at random points (`\frac{x+2}{7}` and `\frac{x}{7}+\frac{2}{7}`), intervals and
 * tuples endpoint by endpoint with the same brackets, sets in any order, and words compared
 * without case or spaces. Expressions go through mathjs's parser and a whitelist of node
 * types and functions before mathjs's own evaluator sees them: model text never reaches
 * JavaScript's.
 */
import { createRequire } from 'node:module';
import type * as MathJs from 'mathjs';
import type { MathNode } from 'mathjs';
import { Rng } from '../../util/rng.js';
import { readAnswer, type Answer, type Scalar } from './latex.js';

// mathjs takes seconds to load on a busy machine: required on first use, so only a run that
// reads math answers pays, not every command that imports the registry
const require = createRequire(import.meta.url);
let loaded: typeof MathJs | undefined;
const mathjs = (): typeof MathJs => (loaded ??= require('mathjs') as typeof MathJs);

const OPERATORS = new Set(['add', 'subtract', 'multiply', 'divide', 'pow', 'unaryMinus', 'unaryPlus']);
const FUNCTIONS = new Set([
  'sqrt',
  'nthRoot',
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'asin',
  'acos',
  'atan',
  'log',
  'exp',
  'abs',
]);
const CONSTANTS = new Set(['pi', 'e', 'Infinity', 'i']);
const SYMBOL =
  /^(?:[a-zA-Z]|alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa|lambda|mu|nu|xi|rho|sigma|tau|upsilon|phi|chi|psi|omega)$/;

/** The parsed expression and its free variables, or undefined when mathjs cannot read it or it holds anything off the whitelist. */
export function parseScalar(expr: string): { node: MathNode; vars: string[] } | undefined {
  let node: MathNode;
  try {
    node = mathjs().parse(expr);
  } catch {
    return undefined;
  }
  const vars = new Set<string>();
  const ok = (n: MathNode): boolean => {
    const any = n as unknown as Record<string, unknown>;
    switch (n.type) {
      case 'ConstantNode':
        return typeof any.value === 'number';
      case 'SymbolNode': {
        const name = any.name as string;
        if (CONSTANTS.has(name)) return true;
        if (!SYMBOL.test(name)) return false;
        vars.add(name);
        return true;
      }
      case 'ParenthesisNode':
        return ok(any.content as MathNode);
      case 'OperatorNode':
        return OPERATORS.has(any.fn as string) && (any.args as MathNode[]).every(ok);
      case 'FunctionNode': {
        const fn = any.fn as { name?: string };
        return FUNCTIONS.has(fn.name ?? '') && (any.args as MathNode[]).every(ok);
      }
      default:
        return false;
    }
  };
  return ok(node) ? { node, vars: [...vars].sort() } : undefined;
}

/** True when every scalar in the answer parses (no words): a completion that is all answer. */
export function readsAsMath(a: Answer): boolean {
  if (a.kind === 'expr') return parseScalar(a.expr) !== undefined;
  if (a.kind === 'text') return false;
  return (a.kind === 'union' ? a.parts : a.items).every(readsAsMath);
}

/** A value mathjs computed, as [re, im]; undefined when it is not a number. */
function numeric(v: unknown): [number, number] | undefined {
  if (typeof v === 'number') return Number.isNaN(v) ? undefined : [v, 0];
  const c = v as { re?: unknown; im?: unknown };
  if (c && typeof c.re === 'number' && typeof c.im === 'number') return [c.re, c.im];
  return undefined;
}

function close(a: number, b: number, tolerance: number): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
}

function evaluate(node: MathNode, scope: Record<string, number>): [number, number] | undefined {
  try {
    return numeric(node.compile().evaluate({ ...scope }));
  } catch {
    return undefined;
  }
}

/** Two scalars equal: numerically when both are numbers, else symbolically (simplify, then random points). */
export function scalarsEqual(a: string, b: string): boolean {
  // simplify's time grows fast with size; a page-long expression is no final answer
  if (a.length + b.length > 600) return a.replace(/\s+/g, '') === b.replace(/\s+/g, '');
  const x = parseScalar(a);
  const y = parseScalar(b);
  if (!x || !y) return false;
  const vars = [...new Set([...x.vars, ...y.vars])];
  if (vars.length === 0) {
    const [u, v] = [evaluate(x.node, {}), evaluate(y.node, {})];
    // math-verify compares numbers rounded to 6 places; a relative 1e-6 is that for large ones too
    return !!u && !!v && close(u[0], v[0], 1e-6) && close(u[1], v[1], 1e-6);
  }
  try {
    const math = mathjs();
    const d = math.simplify(new math.OperatorNode('-', 'subtract', [x.node, y.node]));
    if (d.type === 'ConstantNode' && (d as unknown as { value: unknown }).value === 0) return true;
  } catch {
    // simplify gives up on some forms; the points below still decide
  }
  // identity testing at random points: two different expressions agree at all of them with
  // probability near zero; the seed keeps a verdict the same on every call
  const rng = new Rng(vars.length * 7919 + a.length);
  let compared = 0;
  for (let k = 0; k < 8; k++) {
    const scope = Object.fromEntries(vars.map((v) => [v, 0.3 + 2 * rng.next()]));
    const [u, v] = [evaluate(x.node, scope), evaluate(y.node, scope)];
    if (!u || !v) continue;
    if (!close(u[0], v[0], 1e-8) || !close(u[1], v[1], 1e-8)) return false;
    compared++;
  }
  return compared >= 3;
}

function scalarEqual(gold: Scalar, pred: Scalar): boolean {
  // a percent is the number written and that over 100: 50\% matches 50 and 0.5
  const variants = (s: Scalar) => (s.percent ? [s.expr, `(${s.expr})/100`] : [s.expr]);
  return variants(gold).some((g) => variants(pred).some((p) => scalarsEqual(g, p)));
}

/** Two read answers equal, by kind (see the module comment). */
export function answersEqual(gold: Answer, pred: Answer): boolean {
  if (gold.kind === 'expr' && pred.kind === 'expr') return scalarEqual(gold, pred);
  if (gold.kind === 'text' || pred.kind === 'text') {
    const words = (a: Answer) => (a.kind === 'text' ? a.text : a.kind === 'expr' ? a.expr.replace(/\s+/g, '') : '');
    return words(gold) !== '' && words(gold) === words(pred);
  }
  if (gold.kind === 'interval' && pred.kind === 'interval')
    return (
      gold.open === pred.open &&
      gold.close === pred.close &&
      gold.items.length === pred.items.length &&
      gold.items.every((g, i) => answersEqual(g, pred.items[i]))
    );
  if (gold.kind === 'union' && pred.kind === 'union')
    return gold.parts.length === pred.parts.length && gold.parts.every((g, i) => answersEqual(g, pred.parts[i]));
  if (gold.kind === 'set' && pred.kind === 'set') {
    if (gold.items.length !== pred.items.length) return false;
    const left = [...pred.items];
    return gold.items.every((g) => {
      const k = left.findIndex((p) => answersEqual(g, p));
      return k >= 0 && left.splice(k, 1).length === 1;
    });
  }
  return false;
}

/** A reference answer and a predicted one (both as text) equal: the verifier's comparison. */
export function mathEqual(gold: string, pred: string): boolean {
  return answersEqual(readAnswer(gold), readAnswer(pred));
}
