/**
 * The WebAssembly text of the SIMD kernels. It imports the memory of the tfjs wasm backend,
 * so the kernels read and write tensors where they live; pointers are byte offsets into it
 * and lengths count float32s. `npm run build:simd` compiles it into binary.ts (a test checks
 * that the two agree).
 *
 * Why the text is generated: V8 does not inline wasm calls here and a vector's polynomial is
 * one long chain of dependent operations, so a loop over one vector at a time waits on
 * latency (measured: 24 ns per 4 floats for GELU). Each element function is written inline
 * over its own locals, two or four vectors per iteration (measured best), which lets the CPU overlap the chains; a
 * tail of fewer than 16 floats runs the same code one splatted scalar at a time.
 */
const k = (v: number) => {
  const s = v === Infinity ? 'inf' : String(v);
  return `(v128.const f32x4 ${s} ${s} ${s} ${s})`;
};
const get = (name: string) => `(local.get ${name})`;
const op = (name: string, ...args: string[]) => `(f32x4.${name} ${args.join(' ')})`;

/** p(s) by Horner's rule, coefficients from the highest power down. */
const horner = (s: string, cs: number[]) =>
  cs.slice(1).reduce((acc, c) => op('add', op('mul', acc, get(s)), k(c)), k(cs[0]));

/** Code that leaves a vector in local `${out}`: statements over locals named with the suffix it is given. */
type VectorCode = (inputs: string[], out: string, id: string) => { locals: string[]; code: string };

// erf(x) = x P(x^2) / Q(x^2) on x clamped to [-4, 4] (the rational form of Eigen's float erf;
// absolute error 4.2e-7 in float32 against math.erf, measured over [-6, 6]).
const ERF_P = [
  -2.72614225801306e-10, 2.77068142495902e-8, -2.10102402082508e-6, -5.69250639462346e-5, -7.34990630326855e-4,
  -2.95459980854025e-3, -1.60960333262415e-2,
];
const ERF_Q = [
  -1.45660718464996e-5, -2.13374055278905e-4, -1.68282697438203e-3, -7.37332916720468e-3, -1.42647390514189e-2,
];

/** ±1 with the sign of v: where |x / √2| reaches the clamp, erf is exactly ±1 in float32 (as tfjs's is), so GELU's far tail is exactly 0 or x. */
const ONE_SIGNED = (v: string) =>
  `(v128.or (v128.and ${v} (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) ${k(1)})`;

/** Φ(x) = (1 + erf(x / √2)) / 2 into `out`. */
function cdf(x: string, out: string, id: string): { locals: string[]; code: string } {
  const c = `$c${id}`,
    s = `$s${id}`;
  return {
    locals: [c, s],
    code: `(local.set ${c} ${op('min', op('max', op('mul', x, k(Math.SQRT1_2)), k(-4)), k(4))})
      (local.set ${s} ${op('mul', get(c), get(c))})
      (local.set ${out} ${op(
        'mul',
        k(0.5),
        op(
          'add',
          k(1),
          `(v128.bitselect ${ONE_SIGNED(get(c))}
        ${op('div', op('mul', get(c), horner(s, ERF_P)), horner(s, ERF_Q))} ${op('ge', op('abs', get(c)), k(4))})`,
        ),
      )})`,
  };
}

/**
 * exp(t) into `out`: t = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for precision), e^r
 * by its Taylor series to r^6 (relative error 1.2e-7), and 2^n as 2^h 2^(n-h), h = n >> 1,
 * each built in the exponent bits, so that the whole float32 range comes out, subnormals
 * included. t is clamped to [-104, 88.7]; with `edges`, t above 88.72 gives infinity and
 * below -103.97 zero, as a float32 exp does (NaN stays NaN either way).
 */
function exp(t: string, out: string, id: string, edges = false): { locals: string[]; code: string } {
  const tc = `$t${id}`,
    n = `$n${id}`,
    r = `$r${id}`,
    raw = `$x${id}`,
    ni = `$i${id}`,
    h = `$h${id}`;
  const pow2 = (e: string) => `(i32x4.shl (i32x4.add ${e} (v128.const i32x4 127 127 127 127)) (i32.const 23))`;
  const value = op(
    'mul',
    op('mul', horner(r, [1 / 720, 1 / 120, 1 / 24, 1 / 6, 0.5, 1, 1]), pow2(get(h))),
    pow2(`(i32x4.sub ${get(ni)} ${get(h)})`),
  );
  const edged = `(v128.bitselect ${k(Infinity)} (v128.and ${value} (v128.not ${op('lt', get(raw), k(-103.97208))})) ${op('gt', get(raw), k(88.72284))})`;
  return {
    locals: [tc, n, r, raw, ni, h],
    code: `(local.set ${raw} ${t})
      (local.set ${tc} ${op('min', op('max', get(raw), k(-104)), k(88.7))})
      (local.set ${n} ${op('nearest', op('mul', get(tc), k(Math.LOG2E)))})
      (local.set ${r} ${op('sub', op('sub', get(tc), op('mul', get(n), k(0.693145751953125))), op('mul', get(n), k(1.428606765330187e-6)))})
      (local.set ${ni} (i32x4.trunc_sat_f32x4_s ${get(n)}))
      (local.set ${h} (i32x4.shr_s ${get(ni)} (i32.const 1)))
      (local.set ${out} ${edges ? edged : value})`,
  };
}

/** exp(x), float32's edges included. */
const expAll: VectorCode = ([x], out, id) => exp(x, out, id, true);

/** GELU: x Φ(x). */
const gelu: VectorCode = ([x], out, id) => {
  const p = cdf(x, `$p${id}`, id);
  return {
    locals: [...p.locals, `$p${id}`],
    code: `${p.code}\n      (local.set ${out} ${op('mul', x, get(`$p${id}`))})`,
  };
};

/** GELU's gradient: dy (Φ(x) + x φ(x)), φ(x) = exp(-x²/2) / √(2π). */
const geluGrad: VectorCode = ([dy, x], out, id) => {
  const p = cdf(x, `$p${id}`, id);
  const e = exp(op('mul', op('mul', x, x), k(-0.5)), `$e${id}`, id);
  return {
    locals: [...p.locals, ...e.locals, `$p${id}`, `$e${id}`],
    code: `${p.code}\n      ${e.code}
      (local.set ${out} ${op('mul', dy, op('add', get(`$p${id}`), op('mul', op('mul', x, k(1 / Math.sqrt(2 * Math.PI))), get(`$e${id}`))))})`,
  };
};

/**
 * GELU and its slope at once, for the native passes: out = x Φ(x) and out_1 = Φ(x) + x φ(x),
 * the derivative the backward pass multiplies by. Φ by Abramowitz and Stegun 7.1.26 (erf's
 * absolute error below 1.5e-7, the formula of tfjs's cpu kernel), whose exp(-x²/2) is also
 * √(2π) φ(x): one exp and one division give both.
 */
const geluSlope: VectorCode = ([x], out, id) => {
  const a = `$a${id}`,
    t = `$t2${id}`,
    e = `$e${id}`,
    c = `$c${id}`;
  const ex = exp(op('mul', op('mul', x, x), k(-0.5)), e, id, true);
  const erfAbs = op(
    'sub',
    k(1),
    op(
      'mul',
      op('mul', get(t), horner(t, [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592])),
      get(e),
    ),
  );
  const signed = `(v128.or (v128.and ${x} (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) ${erfAbs})`;
  return {
    locals: [a, t, e, c, ...ex.locals],
    code: `(local.set ${a} ${op('mul', op('abs', x), k(Math.SQRT1_2))})
      (local.set ${t} ${op('div', k(1), op('add', k(1), op('mul', get(a), k(0.3275911))))})
      ${ex.code}
      (local.set ${c} ${op('mul', k(0.5), op('add', k(1), signed))})
      (local.set ${out} ${op('mul', x, get(c))})
      (local.set ${out}_1 ${op('add', get(c), op('mul', op('mul', x, k(1 / Math.sqrt(2 * Math.PI))), get(e)))})`,
  };
};

/** σ(g) = 1 / (1 + exp(-g)) into `out` (exp's edges: far below, exp(-g) is infinite and σ exactly 0). */
function sigmoid(g: string, out: string, id: string): { locals: string[]; code: string } {
  const e = exp(op('neg', g), `$q${id}`, id, true);
  return {
    locals: [...e.locals, `$q${id}`],
    code: `${e.code}\n      (local.set ${out} ${op('div', k(1), op('add', k(1), get(`$q${id}`)))})`,
  };
}

/** SwiGLU's product: silu(g) u = g σ(g) u. */
const swiglu: VectorCode = ([g, u], out, id) => {
  const s = sigmoid(g, `$sg${id}`, id);
  return {
    locals: [...s.locals, `$sg${id}`],
    code: `${s.code}\n      (local.set ${out} ${op('mul', op('mul', g, get(`$sg${id}`)), u)})`,
  };
};

/** Its gradients: dg = dy u σ (1 + g (1 - σ)), du = dy g σ (into `${out}_1`). */
const swigluGrad: VectorCode = ([dy, g, u], out, id) => {
  const s = sigmoid(g, `$sg${id}`, id);
  const sg = get(`$sg${id}`);
  return {
    locals: [...s.locals, `$sg${id}`],
    code: `${s.code}
      (local.set ${out} ${op('mul', op('mul', op('mul', dy, u), sg), op('add', k(1), op('mul', g, op('sub', k(1), sg))))})
      (local.set ${out}_1 ${op('mul', op('mul', dy, g), sg)})`,
  };
};

const at = (base: string, i: string, plus = 0) =>
  `(i32.add (local.get ${base}) (i32.shl (i32.add (local.get ${i}) (i32.const ${plus})) (i32.const 2)))`;

/**
 * An exported loop over float32 indices [0, n): `out[i] = f(ins[i]...)`, `unroll` vectors per
 * iteration (more spill registers). With several outputs, f leaves the second in local
 * `${out}_1`, the third in `${out}_2`.
 */
function elementwise(name: string, ins: string[], outs: string | string[], f: VectorCode, unroll: number): string {
  const targets = typeof outs === 'string' ? [outs] : outs;
  const params = [...ins, ...targets].map((p) => `(param ${p} i32)`).join(' ');
  const locals = new Set<string>();
  const result = (j: number, k: number) => (k === 0 ? `$o${j}` : `$o${j}_${k}`);
  const body = (
    load: (p: string, j: number) => string,
    store: (out: string, j: number, v: string) => string,
    lanes: number,
  ) => {
    const parts = Array.from({ length: lanes }, (_, j) => {
      const r = f(
        ins.map((p) => load(p, j)),
        `$o${j}`,
        String(j),
      );
      r.locals.forEach((l) => locals.add(l));
      targets.forEach((_, k) => locals.add(result(j, k)));
      return r.code;
    });
    const stores = targets.flatMap((out, k) =>
      Array.from({ length: lanes }, (_, j) => store(out, j, get(result(j, k)))),
    );
    return `${parts.join('\n      ')}\n      ${stores.join('\n      ')}`;
  };
  const vec = body(
    (p, j) => `(v128.load ${at(p, '$i', 4 * j)})`,
    (out, j, v) => `(v128.store ${at(out, '$i', 4 * j)} ${v})`,
    unroll,
  );
  const one = body(
    (p) => `(f32x4.splat (f32.load ${at(p, '$i')}))`,
    (out, _, v) => `(f32.store ${at(out, '$i')} (f32x4.extract_lane 0 ${v}))`,
    1,
  );
  return `
  (func (export "${name}") ${params} (param $n i32) (local $i i32) ${[...locals].map((l) => `(local ${l} v128)`).join(' ')}
    (block $tail (loop $wide
      (br_if $tail (i32.gt_s (i32.add (local.get $i) (i32.const ${4 * unroll})) (local.get $n)))
      ${vec}
      (local.set $i (i32.add (local.get $i) (i32.const ${4 * unroll})))
      (br $wide)))
    (block $done (loop $one
      (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
      ${one}
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $one))))`;
}

/** The body of the Adam loop for the vector at $i, with `load` and `store` of a vector or of one lane. */
function ADAM_BODY(load: string, store: string): string {
  const ld = (p: string) =>
    load === 'LANE_LOAD' ? `(f32x4.splat (f32.load ${at(p, '$i')}))` : `(${load} ${at(p, '$i')})`;
  const st = (p: string, v: string) =>
    store === 'LANE_STORE'
      ? `(f32.store ${at(p, '$i')} (f32x4.extract_lane 0 ${v}))`
      : `(${store} ${at(p, '$i')} ${v})`;
  return `(local.set $gv ${ld('$g')})
      (local.set $nm ${op('add', op('mul', ld('$m'), get('$B1')), op('mul', get('$gv'), get('$OMB1')))})
      (local.set $nv ${op('add', op('mul', ld('$v'), get('$B2')), op('mul', op('mul', get('$gv'), get('$gv')), get('$OMB2')))})
      ${st('$mo', get('$nm'))}
      ${st('$vo', get('$nv'))}
      ${st('$po', op('add', op('mul', op('div', op('div', get('$nm'), get('$C1')), op('add', op('sqrt', op('div', get('$nv'), get('$C2'))), get('$EPS'))), get('$LR')), ld('$p')))}`;
}

/**
 * Row t of the n x n block at $p becomes the softmax of its first t + 1 entries, the rest 0
 * (causal attention over one row and head); and its gradient, dp = p (dp - Σ dp p) per row,
 * which needs no mask since p is 0 beyond t. Vectors over each row, a scalar tail.
 */
function causalSoftmax(): string {
  const e = exp(op('sub', '(v128.load (local.get $a))', get('$m')), '$e', 'x', true);
  const lanes = '(i32x4.add (i32x4.splat (local.get $j)) (v128.const i32x4 0 1 2 3))';
  const eOne = exp(op('sub', '(f32x4.splat (f32.load (local.get $a)))', get('$m')), '$e', 'y', true);
  const loop = (name: string, step: number, body: string) => `(local.set $j (i32.const 0))
      (block $${name}Done (loop $${name}
        (br_if $${name}Done (i32.gt_s (i32.add (local.get $j) (i32.const ${step})) (local.get $n)))
        (local.set $a (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        ${body}
        (local.set $j (i32.add (local.get $j) (i32.const ${step})))
        (br $${name})))`;
  // the scalar tail continues from the j where the vectors stopped
  const tail = (name: string, body: string) => `(block $${name}Done (loop $${name}
        (br_if $${name}Done (i32.ge_s (local.get $j) (local.get $n)))
        (local.set $a (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        ${body}
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $${name})))`;
  const rows = (body: string) => `(local.set $t (i32.const 0))
    (block $rowsDone (loop $rows
      (br_if $rowsDone (i32.ge_s (local.get $t) (local.get $n)))
      (local.set $row (i32.add (local.get $p) (i32.shl (i32.mul (local.get $t) (local.get $n)) (i32.const 2))))
      ${body}
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows)))`;
  const locals = (names: string[], type: string) => names.map((l) => `(local ${l} ${type})`).join(' ');
  const forward = `
  (func (export "causalSoftmax") (param $p i32) (param $n i32) ${locals(['$t', '$j', '$row', '$a'], 'i32')}
    (local $max f32) (local $sum f32) ${locals(['$m', '$s', '$e', ...e.locals, ...eOne.locals], 'v128')}
    ${rows(`(local.set $max (f32.const -inf))
      (local.set $j (i32.const 0))
      (block $maxDone (loop $maxLoop
        (br_if $maxDone (i32.gt_s (local.get $j) (local.get $t)))
        (local.set $max (f32.max (local.get $max) (f32.load (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $maxLoop)))
      (local.set $m (f32x4.splat (local.get $max)))
      (local.set $s (v128.const f32x4 0 0 0 0))
      ${loop(
        'expVec',
        4,
        `${e.code}
        (local.set $e (v128.and (local.get $e) (i32x4.le_s ${lanes} (i32x4.splat (local.get $t)))))
        (local.set $s (f32x4.add (local.get $s) (local.get $e)))
        (v128.store (local.get $a) (local.get $e))`,
      )}
      ${tail(
        'expOne',
        `${eOne.code}
        (local.set $e (v128.and (local.get $e) (i32x4.le_s (i32x4.splat (local.get $j)) (i32x4.splat (local.get $t)))))
        (local.set $s (f32x4.add (local.get $s) (v128.and (local.get $e) (v128.const i32x4 -1 0 0 0))))
        (f32.store (local.get $a) (f32x4.extract_lane 0 (local.get $e)))`,
      )}
      (local.set $sum (call $hsum (local.get $s)))
      (local.set $s (f32x4.splat (local.get $sum)))
      ${loop('divVec', 4, '(v128.store (local.get $a) (f32x4.div (v128.load (local.get $a)) (local.get $s)))')}
      ${tail('divOne', '(f32.store (local.get $a) (f32.div (f32.load (local.get $a)) (local.get $sum)))')}`)})`;
  const dpRow = '(i32.add (local.get $dp) (i32.sub (local.get $a) (local.get $p)))';
  const backward = `
  (func (export "causalSoftmaxGrad") (param $p i32) (param $dp i32) (param $n i32) ${locals(['$t', '$j', '$row', '$a'], 'i32')} (local $dot f32) (local $s v128) (local $d v128)
    ${rows(`(local.set $s (v128.const f32x4 0 0 0 0))
      ${loop('dotVec', 4, `(local.set $s (f32x4.add (local.get $s) (f32x4.mul (v128.load (local.get $a)) (v128.load ${dpRow}))))`)}
      (local.set $dot (call $hsum (local.get $s)))
      ${tail('dotOne', `(local.set $dot (f32.add (local.get $dot) (f32.mul (f32.load (local.get $a)) (f32.load ${dpRow}))))`)}
      (local.set $d (f32x4.splat (local.get $dot)))
      ${loop('gradVec', 4, `(v128.store ${dpRow} (f32x4.mul (v128.load (local.get $a)) (f32x4.sub (v128.load ${dpRow}) (local.get $d))))`)}
      ${tail('gradOne', `(f32.store ${dpRow} (f32.mul (f32.load (local.get $a)) (f32.sub (f32.load ${dpRow}) (local.get $dot))))`)}`)})`;
  return forward + backward;
}

/**
 * Attention's softmax over rows of scores at $p with a bias at $b of the same layout (the
 * padding and causal mask, src/models/hf/attention.ts): the first n of each row (rows $stride
 * apart) become softmax(z + bias) in place, as tfjs's softmax computes it (exp(z - max) / Σ),
 * and the rest of the row 0; and its gradient, dp = p (dp - Σ dp p) over the first n, 0 beyond.
 * A caller passes n < stride only where every entry past n is masked (its probability exactly
 * 0): a multiple of 4 then leaves each vector lane's sums as the whole row's (adding 0 changes
 * no sum). Vectors over each row, a scalar tail.
 */
function biasSoftmax(): string {
  const e = exp(op('sub', '(v128.load (local.get $a))', get('$m')), '$e', 'x', true);
  const eOne = exp(op('sub', '(f32x4.splat (f32.load (local.get $a)))', get('$m')), '$e', 'y', true);
  const at2 = (base: string) => `(i32.add (local.get ${base}) (i32.sub (local.get $a) (local.get $p)))`;
  const loop = (name: string, body: string, one: string) => `(local.set $j (i32.const 0))
      (block $${name}Done (loop $${name}
        (br_if $${name}Done (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
        (local.set $a (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        ${body}
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $${name})))
      (block $${name}OneDone (loop $${name}One
        (br_if $${name}OneDone (i32.ge_s (local.get $j) (local.get $n)))
        (local.set $a (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2))))
        ${one}
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $${name}One)))`;
  // rows $stride floats apart; after each row's first $n, the rest of it up to $stride is zeroed at $zero's row
  const rows = (body: string, zero: string) => `(local.set $t (i32.const 0))
    (block $rowsDone (loop $rows
      (br_if $rowsDone (i32.ge_s (local.get $t) (local.get $rows)))
      (local.set $row (i32.add (local.get $p) (i32.shl (i32.mul (local.get $t) (local.get $stride)) (i32.const 2))))
      ${body}
      (memory.fill (i32.add (local.get ${zero}) (i32.add (i32.sub (local.get $row) (local.get $p)) (i32.shl (local.get $n) (i32.const 2))))
        (i32.const 0) (i32.shl (i32.sub (local.get $stride) (local.get $n)) (i32.const 2)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows)))`;
  const locals = (names: string[], type: string) => names.map((l) => `(local ${l} ${type})`).join(' ');
  // $b and $dp are addressed at the same offset from their start as $a is from $p
  const forward = `
  (func (export "biasSoftmax") (param $p i32) (param $b i32) (param $rows i32) (param $n i32) (param $stride i32) ${locals(['$t', '$j', '$row', '$a'], 'i32')}
    (local $max f32) (local $sum f32) ${locals(['$m', '$s', '$e', '$v', ...e.locals, ...eOne.locals], 'v128')}
    ${rows(
      `(local.set $m (v128.const f32x4 -inf -inf -inf -inf))
      (local.set $max (f32.const -inf))
      ${loop(
        'add',
        `(local.set $v (f32x4.add (v128.load (local.get $a)) (v128.load ${at2('$b')})))
        (v128.store (local.get $a) (local.get $v))
        (local.set $m (f32x4.max (local.get $m) (local.get $v)))`,
        `(f32.store (local.get $a) (f32.add (f32.load (local.get $a)) (f32.load ${at2('$b')})))
        (local.set $max (f32.max (local.get $max) (f32.load (local.get $a))))`,
      )}
      (local.set $max (f32.max (local.get $max) (f32.max (f32.max (f32x4.extract_lane 0 (local.get $m)) (f32x4.extract_lane 1 (local.get $m)))
        (f32.max (f32x4.extract_lane 2 (local.get $m)) (f32x4.extract_lane 3 (local.get $m))))))
      (local.set $m (f32x4.splat (local.get $max)))
      (local.set $s (v128.const f32x4 0 0 0 0))
      ${loop(
        'exp',
        `${e.code}
        (local.set $s (f32x4.add (local.get $s) (local.get $e)))
        (v128.store (local.get $a) (local.get $e))`,
        `${eOne.code}
        (local.set $s (f32x4.add (local.get $s) (v128.and (local.get $e) (v128.const i32x4 -1 0 0 0))))
        (f32.store (local.get $a) (f32x4.extract_lane 0 (local.get $e)))`,
      )}
      (local.set $sum (call $hsum (local.get $s)))
      (local.set $s (f32x4.splat (local.get $sum)))
      ${loop(
        'div',
        '(v128.store (local.get $a) (f32x4.div (v128.load (local.get $a)) (local.get $s)))',
        '(f32.store (local.get $a) (f32.div (f32.load (local.get $a)) (local.get $sum)))',
      )}`,
      '$p',
    )})`;
  const backward = `
  (func (export "softmaxGrad") (param $p i32) (param $dp i32) (param $rows i32) (param $n i32) (param $stride i32)
    ${locals(['$t', '$j', '$row', '$a'], 'i32')} (local $dot f32) (local $s v128) (local $d v128)
    ${rows(
      `(local.set $s (v128.const f32x4 0 0 0 0))
      (local.set $dot (f32.const 0))
      ${loop(
        'dot',
        `(local.set $s (f32x4.add (local.get $s) (f32x4.mul (v128.load (local.get $a)) (v128.load ${at2('$dp')}))))`,
        `(local.set $dot (f32.add (local.get $dot) (f32.mul (f32.load (local.get $a)) (f32.load ${at2('$dp')}))))`,
      )}
      (local.set $dot (f32.add (local.get $dot) (call $hsum (local.get $s))))
      (local.set $d (f32x4.splat (local.get $dot)))
      ${loop(
        'grad',
        `(v128.store ${at2('$dp')} (f32x4.mul (v128.load (local.get $a)) (f32x4.sub (v128.load ${at2('$dp')}) (local.get $d))))`,
        `(f32.store ${at2('$dp')} (f32.mul (f32.load (local.get $a)) (f32.sub (f32.load ${at2('$dp')}) (local.get $dot))))`,
      )}`,
      '$dp',
    )})`;
  return forward + backward;
}

/**
 * Row kernels of the fused vocabulary head (src/models/hf/head.ts), each over one row of n
 * logits z at $p, two vectors an iteration and a scalar tail: rowMax (the row's largest z),
 * expStats (s = Σ e and q = Σ e z for e = exp(k z - m)) and expGrad, which overwrites the row
 * with scale exp(k z - lse) (c0 + c1 z), the softmax part of the logits' gradient.
 */
function headRows(): string {
  const locals = (names: string[], type: string) => names.map((l) => `(local ${l} ${type})`).join(' ');
  const loops = (vec: (a: string, id: string) => string, one: (a: string) => string) => `(local.set $j (i32.const 0))
    (block $vecDone (loop $vec
      (br_if $vecDone (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${vec('(local.get $a)', 'A')}
      ${vec('(i32.add (local.get $a) (i32.const 16))', 'B')}
      (local.set $j (i32.add (local.get $j) (i32.const 8)))
      (br $vec)))
    (block $oneDone (loop $one
      (br_if $oneDone (i32.ge_s (local.get $j) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${one('(local.get $a)')}
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $one)))`;
  const max = `
  (func (export "rowMax") (param $p i32) (param $n i32) (result f32) (local $j i32) (local $a i32) (local $mA v128) (local $mB v128) (local $m f32)
    (local.set $mA (v128.const f32x4 -inf -inf -inf -inf))
    (local.set $mB (v128.const f32x4 -inf -inf -inf -inf))
    (local.set $m (f32.const -inf))
    ${loops(
      (a, id) => `(local.set $m${id} ${op('max', get(`$m${id}`), `(v128.load ${a})`)})`,
      (a) => `(local.set $m (f32.max (local.get $m) (f32.load ${a})))`,
    )}
    (local.set $mA ${op('max', get('$mA'), get('$mB'))})
    (f32.max (f32.max (f32.max (f32x4.extract_lane 0 (local.get $mA)) (f32x4.extract_lane 1 (local.get $mA)))
                      (f32.max (f32x4.extract_lane 2 (local.get $mA)) (f32x4.extract_lane 3 (local.get $mA))))
             (local.get $m)))`;
  const expOf = (z: string, id: string) => exp(op('sub', op('mul', get('$kv'), z), get('$mv')), `$e${id}`, id, true);
  const parts = ['A', 'B', 'C'].map((id) => expOf(`(local.get $z${id})`, id));
  const vLocals = [
    ...parts.flatMap((e) => e.locals),
    '$eA',
    '$eB',
    '$eC',
    '$zA',
    '$zB',
    '$zC',
    '$sA',
    '$sB',
    '$qA',
    '$qB',
  ];
  const load = (id: string, a: string) =>
    id === 'C' ? `(local.set $zC (f32x4.splat (f32.load ${a})))` : `(local.set $z${id} (v128.load ${a}))`;
  const stats = `
  (func (export "expStats") (param $p i32) (param $n i32) (param $k f32) (param $m f32) (result f32 f32)
    ${locals(['$j', '$a'], 'i32')} (local $s f32) (local $q f32) (local $kv v128) (local $mv v128) ${locals(vLocals, 'v128')}
    (local.set $kv (f32x4.splat (local.get $k)))
    (local.set $mv (f32x4.splat (local.get $m)))
    ${loops(
      (a, id) => `${load(id, a)}
      ${parts[id === 'A' ? 0 : 1].code}
      (local.set $s${id} ${op('add', get(`$s${id}`), get(`$e${id}`))})
      (local.set $q${id} ${op('add', get(`$q${id}`), op('mul', get(`$e${id}`), get(`$z${id}`)))})`,
      (a) => `${load('C', a)}
      ${parts[2].code}
      (local.set $s (f32.add (local.get $s) (f32x4.extract_lane 0 (local.get $eC))))
      (local.set $q (f32.add (local.get $q) (f32x4.extract_lane 0 ${op('mul', get('$eC'), get('$zC'))})))`,
    )}
    (f32.add (call $hsum ${op('add', get('$sA'), get('$sB'))}) (local.get $s))
    (f32.add (call $hsum ${op('add', get('$qA'), get('$qB'))}) (local.get $q)))`;
  const value = (id: string) =>
    op('mul', get('$scv'), op('mul', get(`$e${id}`), op('add', get('$c0v'), op('mul', get('$c1v'), get(`$z${id}`)))));
  const grad = `
  (func (export "expGrad") (param $p i32) (param $n i32) (param $k f32) (param $lse f32) (param $c0 f32) (param $c1 f32) (param $scale f32)
    ${locals(['$j', '$a'], 'i32')} (local $kv v128) (local $mv v128) (local $c0v v128) (local $c1v v128) (local $scv v128) ${locals(vLocals, 'v128')}
    (local.set $kv (f32x4.splat (local.get $k)))
    (local.set $mv (f32x4.splat (local.get $lse)))
    (local.set $c0v (f32x4.splat (local.get $c0)))
    (local.set $c1v (f32x4.splat (local.get $c1)))
    (local.set $scv (f32x4.splat (local.get $scale)))
    ${loops(
      (a, id) => `${load(id, a)}
      ${parts[id === 'A' ? 0 : 1].code}
      (v128.store ${a} ${value(id)})`,
      (a) => `${load('C', a)}
      ${parts[2].code}
      (f32.store ${a} (f32x4.extract_lane 0 ${value('C')}))`,
    )})`;
  return max + stats + grad + draw() + sums() + maxSum();
}

/** rowMaxSum: [the largest of the n floats at $p, their sum in doubles], one vector at a time. */
function maxSum(): string {
  return `
  (func (export "rowMaxSum") (param $p i32) (param $n i32) (result f32 f64)
    (local $j i32) (local $a i32) (local $mv v128) (local $z v128) (local $m f32) (local $s f64)
    (local.set $mv (v128.const f32x4 -inf -inf -inf -inf))
    (local.set $m (f32.const -inf))
    (block $vecDone (loop $vec
      (br_if $vecDone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
      (local.set $z (v128.load (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2)))))
      (local.set $mv ${op('max', get('$mv'), get('$z'))})
      (local.set $s (f64.add (local.get $s) (f64.add
        (f64x2.extract_lane 0 (f64x2.add (f64x2.promote_low_f32x4 (local.get $z)) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $z) (local.get $z)))))
        (f64x2.extract_lane 1 (f64x2.add (f64x2.promote_low_f32x4 (local.get $z)) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $z) (local.get $z))))))))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $vec)))
    (block $oneDone (loop $one
      (br_if $oneDone (i32.ge_s (local.get $j) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      (local.set $m (f32.max (local.get $m) (f32.load (local.get $a))))
      (local.set $s (f64.add (local.get $s) (f64.promote_f32 (f32.load (local.get $a)))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $one)))
    (f32.max (f32.max (f32.max (f32x4.extract_lane 0 (local.get $mv)) (f32x4.extract_lane 1 (local.get $mv)))
                      (f32.max (f32x4.extract_lane 2 (local.get $mv)) (f32x4.extract_lane 3 (local.get $mv))))
             (local.get $m))
    (local.get $s))`;
}

/**
 * expSums: [Σ e, Σ e t] over the n floats z at $p, t = k z - m and e = exp(t), summed in
 * doubles four weights at a time: the sampler's statistics, which float32 lanes (expStats)
 * would take with a relative error of 1e-4 over a 151,669-token vocabulary.
 */
function sums(): string {
  const vec = exp(get('$t'), '$e', 'S', true);
  const one = exp(get('$t'), '$e', 'T', true);
  const add = `(local.set $s (f64.add (local.get $s) (f64.promote_f32 (call $hsum (local.get $e)))))
      (local.set $q (f64.add (local.get $q) (f64.promote_f32 (call $hsum ${op('mul', get('$e'), get('$t'))}))))`;
  const oneAdd = `(local.set $s (f64.add (local.get $s) (f64.promote_f32 (f32x4.extract_lane 0 (local.get $e)))))
      (local.set $q (f64.add (local.get $q) (f64.promote_f32 (f32x4.extract_lane 0 ${op('mul', get('$e'), get('$t'))}))))`;
  const t = (load: string) => `(local.set $t ${op('sub', op('mul', get('$kv'), load), get('$mv'))})`;
  return `
  (func (export "expSums") (param $p i32) (param $n i32) (param $k f32) (param $m f32) (result f64 f64)
    (local $j i32) (local $a i32) (local $s f64) (local $q f64) (local $kv v128) (local $mv v128) (local $e v128) (local $t v128)
    ${[...vec.locals, ...one.locals].map((l) => `(local ${l} v128)`).join(' ')}
    (local.set $kv (f32x4.splat (local.get $k)))
    (local.set $mv (f32x4.splat (local.get $m)))
    (block $vecDone (loop $vec
      (br_if $vecDone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${t('(v128.load (local.get $a))')}
      ${vec.code}
      ${add}
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $vec)))
    (block $oneDone (loop $one
      (br_if $oneDone (i32.ge_s (local.get $j) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${t('(f32x4.splat (f32.load (local.get $a)))')}
      ${one.code}
      ${oneAdd}
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $one)))
    (local.get $s)
    (local.get $q))`;
}

/**
 * expDraw: the first index i at which Σ_{j <= i} exp(k z_j - m) over the n floats z at $p
 * exceeds u, or -1 if none does (round-off: u a hair above the sum). A vector's four weights
 * are summed and compared at once, and only the vector that crosses u is walked lane by lane;
 * the running sum is a double, so 151,669 weights add without float32's drift.
 */
function draw(): string {
  const e = exp(op('sub', op('mul', get('$kv'), '(v128.load (local.get $a))'), get('$mv')), '$e', 'D', true);
  const one = exp(
    op('sub', op('mul', get('$kv'), '(f32x4.splat (f32.load (local.get $a)))'), get('$mv')),
    '$e',
    'E',
    true,
  );
  const lane = (
    i: number,
  ) => `(local.set $acc (f64.add (local.get $acc) (f64.promote_f32 (f32x4.extract_lane ${i} (local.get $e)))))
        (if (f64.gt (local.get $acc) (local.get $u)) (then (return (i32.add (local.get $j) (i32.const ${i})))))`;
  return `
  (func (export "expDraw") (param $p i32) (param $n i32) (param $k f32) (param $m f32) (param $u f64) (result i32)
    (local $j i32) (local $a i32) (local $acc f64) (local $s f64) (local $kv v128) (local $mv v128) (local $e v128)
    ${[...e.locals, ...one.locals].map((l) => `(local ${l} v128)`).join(' ')}
    (local.set $kv (f32x4.splat (local.get $k)))
    (local.set $mv (f32x4.splat (local.get $m)))
    (block $vecDone (loop $vec
      (br_if $vecDone (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${e.code}
      (local.set $s (f64.promote_f32 (call $hsum (local.get $e))))
      (if (f64.gt (f64.add (local.get $acc) (local.get $s)) (local.get $u))
        (then
        ${[0, 1, 2, 3].map(lane).join(' ')})
        (else (local.set $acc (f64.add (local.get $acc) (local.get $s)))))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $vec)))
    (block $oneDone (loop $one
      (br_if $oneDone (i32.ge_s (local.get $j) (local.get $n)))
      (local.set $a (i32.add (local.get $p) (i32.shl (local.get $j) (i32.const 2))))
      ${one.code}
      ${lane(0)}
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $one)))
    (i32.const -1))`;
}

/**
 * RoPE's rotation of T rows of hd floats at $x into $y, with the rows' cos and sin at $c and $s
 * (hd each, their halves equal): y1 = x1 c - x2 s', y2 = x2 c + x1 s' on each row's halves,
 * s' = sign s. Computed in doubles, two at a time, and rounded to float32 once, as the JS loop
 * it replaces computes them (a float32 product of two floats is exact in a double), so the
 * results are the same bits.
 */
function rotateHalves(): string {
  const two = (at: string) => `(f64x2.promote_low_f32x4 (v128.load64_zero ${at}))`;
  const at = (base: string, half: string) =>
    `(i32.add (local.get ${base}) (i32.shl (i32.add (local.get $i) ${half}) (i32.const 2)))`;
  return `
  (func (export "rotateHalves") (param $x i32) (param $c i32) (param $s i32) (param $y i32) (param $T i32) (param $hd i32) (param $sign f64)
    (local $t i32) (local $i i32) (local $h2 i32) (local $x1 v128) (local $x2 v128) (local $cv v128) (local $sv v128)
    (local.set $h2 (i32.shr_u (local.get $hd) (i32.const 1)))
    (block $rowsDone (loop $rows
      (br_if $rowsDone (i32.ge_s (local.get $t) (local.get $T)))
      (local.set $i (i32.const 0))
      (block $done (loop $pairs
        (br_if $done (i32.ge_s (local.get $i) (local.get $h2)))
        (local.set $x1 ${two(at('$x', '(i32.const 0)'))})
        (local.set $x2 ${two(at('$x', '(local.get $h2)'))})
        (local.set $cv ${two(at('$c', '(i32.const 0)'))})
        (local.set $sv (f64x2.mul ${two(at('$s', '(i32.const 0)'))} (f64x2.splat (local.get $sign))))
        (v128.store64_lane 0 ${at('$y', '(i32.const 0)')} (f32x4.demote_f64x2_zero
          (f64x2.sub (f64x2.mul (local.get $x1) (local.get $cv)) (f64x2.mul (local.get $x2) (local.get $sv)))))
        (v128.store64_lane 0 ${at('$y', '(local.get $h2)')} (f32x4.demote_f64x2_zero
          (f64x2.add (f64x2.mul (local.get $x2) (local.get $cv)) (f64x2.mul (local.get $x1) (local.get $sv)))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $pairs)))
      (local.set $x (i32.add (local.get $x) (i32.shl (local.get $hd) (i32.const 2))))
      (local.set $y (i32.add (local.get $y) (i32.shl (local.get $hd) (i32.const 2))))
      (local.set $c (i32.add (local.get $c) (i32.shl (local.get $hd) (i32.const 2))))
      (local.set $s (i32.add (local.get $s) (i32.shl (local.get $hd) (i32.const 2))))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $rows)))
  )`;
}

export const SIMD_SOURCE = `(module
  (import "env" "memory" (memory 0))
${elementwise('exp', ['$x'], '$y', expAll, 4)}
${elementwise('gelu', ['$x'], '$y', gelu, 4)}
${elementwise('geluGrad', ['$dy', '$x'], '$dx', geluGrad, 2)}
${elementwise('add', ['$a', '$b'], '$y', ([a, b], out) => ({ locals: [], code: `(local.set ${out} ${op('add', a, b)})` }), 4)}
${elementwise('mul', ['$a', '$b'], '$y', ([a, b], out) => ({ locals: [], code: `(local.set ${out} ${op('mul', a, b)})` }), 4)}
${elementwise('geluSlope', ['$x'], ['$y', '$s'], geluSlope, 2)}
${causalSoftmax()}
${biasSoftmax()}
${elementwise('swiglu', ['$g', '$u'], '$y', swiglu, 2)}
${elementwise('swigluGrad', ['$dy', '$g', '$u'], ['$dg', '$du'], swigluGrad, 2)}
${headRows()}
${rotateHalves()}

  ;; out[j] = sum over r < rows of x[r * inner + j], row by row so that memory is read once in order
  (func (export "sumRows") (param $x i32) (param $out i32) (param $rows i32) (param $inner i32) (local $r i32) (local $j i32) (local $row i32)
    (memory.fill (local.get $out) (i32.const 0) (i32.shl (local.get $inner) (i32.const 2)))
    (block $rowsDone (loop $eachRow
      (br_if $rowsDone (i32.ge_s (local.get $r) (local.get $rows)))
      (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $inner)) (i32.const 2))))
      (local.set $j (i32.const 0))
      (block $tail (loop $four
        (br_if $tail (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $inner)))
        (v128.store ${at('$out', '$j')} (f32x4.add (v128.load ${at('$out', '$j')}) (v128.load ${at('$row', '$j')})))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $four)))
      (block $done (loop $one
        (br_if $done (i32.ge_s (local.get $j) (local.get $inner)))
        (f32.store ${at('$out', '$j')} (f32.add (f32.load ${at('$out', '$j')}) (f32.load ${at('$row', '$j')})))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $one)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $eachRow))))
  ;; sum of the four lanes
  (func $hsum (param $v v128) (result f32)
    (f32.add (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
             (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  ;; mean and 1 / sqrt(variance + eps) of the d floats at $row (d a multiple of 4), two passes
  ;; as tfjs computes them: the mean, then the mean of squared deviations
  (func $stats (param $row i32) (param $d i32) (param $eps f32) (result f32 f32) (local $j i32) (local $acc v128) (local $m v128) (local $c v128) (local $mean f32)
    (block $done (loop $each
      (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
      (local.set $acc (f32x4.add (local.get $acc) (v128.load ${at('$row', '$j')})))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $each)))
    (local.set $mean (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_s (local.get $d))))
    (local.set $m (f32x4.splat (local.get $mean)))
    (local.set $acc (v128.const f32x4 0 0 0 0))
    (local.set $j (i32.const 0))
    (block $done2 (loop $each2
      (br_if $done2 (i32.ge_s (local.get $j) (local.get $d)))
      (local.set $c (f32x4.sub (v128.load ${at('$row', '$j')}) (local.get $m)))
      (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $c) (local.get $c))))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $each2)))
    (local.get $mean)
    (f32.div (f32.const 1) (f32.sqrt (f32.add (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_s (local.get $d))) (local.get $eps)))))

  ;; y = (x - mean) rstd g + b over rows of d floats
  (func (export "layerNorm") (param $x i32) (param $g i32) (param $b i32) (param $y i32) (param $rows i32) (param $d i32) (param $eps f32)
    (local $r i32) (local $j i32) (local $row i32) (local $out i32) (local $m v128) (local $s v128) (local $mean f32) (local $rstd f32)
    (block $rowsDone (loop $eachRow
      (br_if $rowsDone (i32.ge_s (local.get $r) (local.get $rows)))
      (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2))))
      (local.set $out (i32.add (local.get $y) (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2))))
      (call $stats (local.get $row) (local.get $d) (local.get $eps))
      (local.set $rstd) (local.set $mean)
      (local.set $m (f32x4.splat (local.get $mean)))
      (local.set $s (f32x4.splat (local.get $rstd)))
      (local.set $j (i32.const 0))
      (block $done (loop $each
        (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
        (v128.store ${at('$out', '$j')} (f32x4.add
          (f32x4.mul (f32x4.mul (f32x4.sub (v128.load ${at('$row', '$j')}) (local.get $m)) (local.get $s)) (v128.load ${at('$g', '$j')}))
          (v128.load ${at('$b', '$j')})))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $eachRow))))

  ;; the gradients of layerNorm: with xh = (x - mean) rstd and gd = dy g,
  ;; dx = rstd (gd - mean(gd) - xh mean(gd xh)), dg = sum over rows of dy xh, db = sum of dy;
  ;; $want says which to write (1 dx, 2 dg, 4 db): tfjs asks for each input's gradient apart
  (func (export "layerNormGrad") (param $dy i32) (param $x i32) (param $g i32) (param $dx i32) (param $dg i32) (param $db i32) (param $rows i32) (param $d i32) (param $eps f32) (param $want i32)
    (local $r i32) (local $j i32) (local $off i32) (local $row i32) (local $grow i32) (local $out i32)
    (local $m v128) (local $s v128) (local $xh v128) (local $gd v128) (local $v v128) (local $a v128) (local $bb v128)
    (local $mean f32) (local $rstd f32)
    (if (i32.and (local.get $want) (i32.const 2)) (then (memory.fill (local.get $dg) (i32.const 0) (i32.shl (local.get $d) (i32.const 2)))))
    (if (i32.and (local.get $want) (i32.const 4)) (then (memory.fill (local.get $db) (i32.const 0) (i32.shl (local.get $d) (i32.const 2)))))
    (block $rowsDone (loop $eachRow
      (br_if $rowsDone (i32.ge_s (local.get $r) (local.get $rows)))
      (local.set $off (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2)))
      (local.set $row (i32.add (local.get $x) (local.get $off)))
      (local.set $grow (i32.add (local.get $dy) (local.get $off)))
      (local.set $out (i32.add (local.get $dx) (local.get $off)))
      (call $stats (local.get $row) (local.get $d) (local.get $eps))
      (local.set $rstd) (local.set $mean)
      (local.set $m (f32x4.splat (local.get $mean)))
      (local.set $s (f32x4.splat (local.get $rstd)))
      (local.set $a (v128.const f32x4 0 0 0 0))
      (local.set $bb (v128.const f32x4 0 0 0 0))
      (local.set $j (i32.const 0))
      (block $done (loop $each
        (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
        (local.set $xh (f32x4.mul (f32x4.sub (v128.load ${at('$row', '$j')}) (local.get $m)) (local.get $s)))
        (local.set $v (v128.load ${at('$grow', '$j')}))
        (local.set $gd (f32x4.mul (local.get $v) (v128.load ${at('$g', '$j')})))
        (local.set $a (f32x4.add (local.get $a) (local.get $gd)))
        (local.set $bb (f32x4.add (local.get $bb) (f32x4.mul (local.get $gd) (local.get $xh))))
        (if (i32.and (local.get $want) (i32.const 2)) (then
          (v128.store ${at('$dg', '$j')} (f32x4.add (v128.load ${at('$dg', '$j')}) (f32x4.mul (local.get $v) (local.get $xh))))))
        (if (i32.and (local.get $want) (i32.const 4)) (then
          (v128.store ${at('$db', '$j')} (f32x4.add (v128.load ${at('$db', '$j')}) (local.get $v)))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each)))
      (if (i32.and (local.get $want) (i32.const 1)) (then
      (local.set $a (f32x4.splat (f32.div (call $hsum (local.get $a)) (f32.convert_i32_s (local.get $d)))))
      (local.set $bb (f32x4.splat (f32.div (call $hsum (local.get $bb)) (f32.convert_i32_s (local.get $d)))))
      (local.set $j (i32.const 0))
      (block $done2 (loop $each2
        (br_if $done2 (i32.ge_s (local.get $j) (local.get $d)))
        (local.set $xh (f32x4.mul (f32x4.sub (v128.load ${at('$row', '$j')}) (local.get $m)) (local.get $s)))
        (local.set $gd (f32x4.mul (v128.load ${at('$grow', '$j')}) (v128.load ${at('$g', '$j')})))
        (v128.store ${at('$out', '$j')} (f32x4.mul (local.get $s) (f32x4.sub (f32x4.sub (local.get $gd) (local.get $a)) (f32x4.mul (local.get $xh) (local.get $bb)))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each2)))))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $eachRow))))
  ;; 1 / sqrt(mean of squares + eps) of the d floats at $row (d a multiple of 4)
  (func $rms (param $row i32) (param $d i32) (param $eps f32) (result f32) (local $j i32) (local $acc v128) (local $v v128)
    (block $done (loop $each
      (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
      (local.set $v (v128.load ${at('$row', '$j')}))
      (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul (local.get $v) (local.get $v))))
      (local.set $j (i32.add (local.get $j) (i32.const 4)))
      (br $each)))
    (f32.div (f32.const 1) (f32.sqrt (f32.add (f32.div (call $hsum (local.get $acc)) (f32.convert_i32_s (local.get $d))) (local.get $eps)))))

  ;; RMSNorm: y = x r g over rows of d floats, r = 1 / sqrt(mean(x^2) + eps)
  (func (export "rmsNorm") (param $x i32) (param $g i32) (param $y i32) (param $rows i32) (param $d i32) (param $eps f32)
    (local $r i32) (local $j i32) (local $row i32) (local $out i32) (local $s v128)
    (block $rowsDone (loop $eachRow
      (br_if $rowsDone (i32.ge_s (local.get $r) (local.get $rows)))
      (local.set $row (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2))))
      (local.set $out (i32.add (local.get $y) (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2))))
      (local.set $s (f32x4.splat (call $rms (local.get $row) (local.get $d) (local.get $eps))))
      (local.set $j (i32.const 0))
      (block $done (loop $each
        (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
        (v128.store ${at('$out', '$j')} (f32x4.mul (f32x4.mul (v128.load ${at('$row', '$j')}) (local.get $s)) (v128.load ${at('$g', '$j')})))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $eachRow))))

  ;; the gradients of rmsNorm: with xh = x r and gd = dy g, dx = r (gd - xh mean(gd xh)) and
  ;; dg = sum over rows of dy xh; $want says which to write (1 dx, 2 dg)
  (func (export "rmsNormGrad") (param $dy i32) (param $x i32) (param $g i32) (param $dx i32) (param $dg i32) (param $rows i32) (param $d i32) (param $eps f32) (param $want i32)
    (local $r i32) (local $j i32) (local $off i32) (local $row i32) (local $grow i32) (local $out i32)
    (local $s v128) (local $xh v128) (local $v v128) (local $gd v128) (local $bb v128)
    (if (i32.and (local.get $want) (i32.const 2)) (then (memory.fill (local.get $dg) (i32.const 0) (i32.shl (local.get $d) (i32.const 2)))))
    (block $rowsDone (loop $eachRow
      (br_if $rowsDone (i32.ge_s (local.get $r) (local.get $rows)))
      (local.set $off (i32.shl (i32.mul (local.get $r) (local.get $d)) (i32.const 2)))
      (local.set $row (i32.add (local.get $x) (local.get $off)))
      (local.set $grow (i32.add (local.get $dy) (local.get $off)))
      (local.set $out (i32.add (local.get $dx) (local.get $off)))
      (local.set $s (f32x4.splat (call $rms (local.get $row) (local.get $d) (local.get $eps))))
      (local.set $bb (v128.const f32x4 0 0 0 0))
      (local.set $j (i32.const 0))
      (block $done (loop $each
        (br_if $done (i32.ge_s (local.get $j) (local.get $d)))
        (local.set $xh (f32x4.mul (v128.load ${at('$row', '$j')}) (local.get $s)))
        (local.set $v (v128.load ${at('$grow', '$j')}))
        (local.set $bb (f32x4.add (local.get $bb) (f32x4.mul (f32x4.mul (local.get $v) (v128.load ${at('$g', '$j')})) (local.get $xh))))
        (if (i32.and (local.get $want) (i32.const 2)) (then
          (v128.store ${at('$dg', '$j')} (f32x4.add (v128.load ${at('$dg', '$j')}) (f32x4.mul (local.get $v) (local.get $xh))))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each)))
      (if (i32.and (local.get $want) (i32.const 1)) (then
      (local.set $bb (f32x4.splat (f32.div (call $hsum (local.get $bb)) (f32.convert_i32_s (local.get $d)))))
      (local.set $j (i32.const 0))
      (block $done2 (loop $each2
        (br_if $done2 (i32.ge_s (local.get $j) (local.get $d)))
        (local.set $xh (f32x4.mul (v128.load ${at('$row', '$j')}) (local.get $s)))
        (local.set $gd (f32x4.mul (v128.load ${at('$grow', '$j')}) (v128.load ${at('$g', '$j')})))
        (v128.store ${at('$out', '$j')} (f32x4.mul (local.get $s) (f32x4.sub (local.get $gd) (f32x4.mul (local.get $xh) (local.get $bb)))))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $each2)))))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $eachRow))))
  ;; One Adam step in tfjs's order of float32 operations (see fused/adam.ts), so that results
  ;; are bit for bit those of tf.train.adam: m' = m b1 + g (1 - b1), v' = v b2 + g^2 (1 - b2),
  ;; value' = (m' / c1) / (sqrt(v' / c2) + eps) (-lr) + value, with c1, c2 = 1 - beta^t.
  (func (export "adam") (param $p i32) (param $m i32) (param $v i32) (param $g i32) (param $po i32) (param $mo i32) (param $vo i32) (param $n i32)
    (param $b1 f32) (param $omb1 f32) (param $b2 f32) (param $omb2 f32) (param $c1 f32) (param $c2 f32) (param $eps f32) (param $neglr f32)
    (local $i i32) (local $gv v128) (local $nm v128) (local $nv v128)
    (local $B1 v128) (local $OMB1 v128) (local $B2 v128) (local $OMB2 v128) (local $C1 v128) (local $C2 v128) (local $EPS v128) (local $LR v128)
    (local.set $B1 (f32x4.splat (local.get $b1))) (local.set $OMB1 (f32x4.splat (local.get $omb1)))
    (local.set $B2 (f32x4.splat (local.get $b2))) (local.set $OMB2 (f32x4.splat (local.get $omb2)))
    (local.set $C1 (f32x4.splat (local.get $c1))) (local.set $C2 (f32x4.splat (local.get $c2)))
    (local.set $EPS (f32x4.splat (local.get $eps))) (local.set $LR (f32x4.splat (local.get $neglr)))
    (block $tail (loop $four
      (br_if $tail (i32.gt_s (i32.add (local.get $i) (i32.const 4)) (local.get $n)))
      ${ADAM_BODY('v128.load', 'v128.store')}
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $four)))
    (block $done (loop $one
      (br_if $done (i32.ge_s (local.get $i) (local.get $n)))
      ${ADAM_BODY('LANE_LOAD', 'LANE_STORE')}
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $one))))
)`;
