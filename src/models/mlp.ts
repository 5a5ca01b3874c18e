import * as tf from '@tensorflow/tfjs';
import { Rng } from '../util/rng.js';
import { linear, seededNormal, tokenEntropy, tokenLogProbs } from './ops.js';
import { sampleToken, validateSampling } from './sampling.js';
import type { Policy, PolicyInput, ScoredBatch } from './types.js';
import { variablePrefix } from './names.js';

/** Shape and initialisation of an `MlpPolicy`; `validateMlpConfig` checks it. */
export interface MlpConfig {
  /** length of the feature vector a game hands the policy */
  inputSize: number;
  /** widths of the hidden layers, first to last; empty gives a linear policy */
  hiddenSizes: number[];
  /** number of discrete actions the policy head scores */
  numActions: number;
  /** nonlinearity after each hidden layer (default tanh) */
  activation?: 'tanh' | 'relu';
  /** add a value head (a linear map of the last hidden layer) for PPO / actor-critic */
  valueHead?: boolean;
  /** seed of the weight initialisation and of `act` when it is given no seed */
  seed?: number;
}

/** Options of `MlpPolicy.act`. */
export interface ActOptions {
  /** 0 means greedy; otherwise logits are divided by it (default 1) */
  temperature?: number;
  /** legal[b][a] says whether action a is allowed in row b; omitted means all are */
  legal?: boolean[][];
  /** seed of this call's draws; without it the model's own generator advances */
  seed?: number;
}

/** What `MlpPolicy.act` chose, one entry per row. */
export interface ActResult {
  actions: number[];
  /** log-probability of each action under the masked, temperature-scaled distribution */
  logProbs: number[];
  /** entropy of each row's masked distribution at temperature 1 (the policy's own, whatever the sampling) */
  entropies: number[];
  /** the value head's estimate of each row, when the model has one */
  values?: number[];
}

const NEG = -1e9; // logit of an illegal action: exp underflows to exactly 0, and stays finite

/** Throws an error naming the offending field when `c` cannot build a model. */
export function validateMlpConfig(c: MlpConfig): void {
  for (const key of ['inputSize', 'numActions'] as const) {
    if (!Number.isInteger(c[key]) || c[key] <= 0)
      throw new Error(`mlp: ${key} must be a positive integer, got ${c[key]}`);
  }
  if (!Array.isArray(c.hiddenSizes)) throw new Error(`mlp: hiddenSizes must be an array, got ${c.hiddenSizes}`);
  c.hiddenSizes.forEach((h, i) => {
    if (!Number.isInteger(h) || h <= 0) throw new Error(`mlp: hiddenSizes[${i}] must be a positive integer, got ${h}`);
  });
  const act = c.activation ?? 'tanh';
  if (act !== 'tanh' && act !== 'relu') throw new Error(`mlp: activation must be 'tanh' or 'relu', got ${act}`);
  if (c.seed !== undefined && !Number.isFinite(c.seed))
    throw new Error(`mlp: seed must be a finite number, got ${c.seed}`);
}

/** The names and shapes of every weight (`l0.w`, `l0.b`, ..., `pi.*`, `value.*`), which checkpoints check against. */
export function mlpWeightShapes(c: MlpConfig): Record<string, number[]> {
  const s: Record<string, number[]> = {};
  let fanIn = c.inputSize;
  c.hiddenSizes.forEach((h, i) => {
    Object.assign(s, { [`l${i}.w`]: [fanIn, h], [`l${i}.b`]: [h] });
    fanIn = h;
  });
  Object.assign(s, { 'pi.w': [fanIn, c.numActions], 'pi.b': [c.numActions] });
  if (c.valueHead) Object.assign(s, { 'value.w': [fanIn, 1], 'value.b': [1] });
  return s;
}

/**
 * Scaled normal, std 1/sqrt(fan_in), biases 0; the policy head gets std 0.01 so the first
 * policy is near uniform and every action gets explored (as orthogonal init with gain 0.01 does).
 */
function initialWeight(name: string, shape: number[], rng: Rng): Float32Array {
  const size = shape.reduce((a, b) => a * b, 1);
  if (name.endsWith('.b')) return new Float32Array(size);
  return seededNormal(size, name === 'pi.w' ? 0.01 : 1 / Math.sqrt(shape[0]), () => rng.normal());
}

/** A multilayer perceptron policy for games: features [B, inputSize] in, logits over actions out. */
export class MlpPolicy implements Policy {
  readonly kind = 'mlp';
  readonly weights: Record<string, tf.Variable>;
  private readonly rng: Rng;

  constructor(
    readonly config: MlpConfig,
    initial?: Record<string, tf.Tensor>,
  ) {
    validateMlpConfig(config);
    const rng = new Rng(config.seed ?? 0);
    const prefix = variablePrefix('mlp');
    this.weights = {};
    const shapes = Object.entries(mlpWeightShapes(config));
    // Checked before any variable exists, so a bad checkpoint leaks nothing.
    for (const [name, shape] of shapes) {
      const given = initial?.[name];
      if (given && given.shape.join() !== shape.join())
        throw new Error(`mlp: initial ${name} has shape [${given.shape}], expected [${shape}]`);
    }
    for (const [name, shape] of shapes) {
      // Drawn even when `initial` overrides it, so the other weights match the seeded model's.
      const drawn = initialWeight(name, shape, rng);
      const given = initial?.[name];
      const init = given ?? tf.tensor(drawn, shape);
      this.weights[name] = tf.variable(init, true, `${prefix}/${name}`);
      if (!given) init.dispose();
    }
    this.rng = new Rng(rng.next() * 2 ** 32); // continues the seed's stream: act() is reproducible too
  }

  get hasValueHead(): boolean {
    return Boolean(this.config.valueHead);
  }

  variables(): tf.Variable[] {
    return Object.values(this.weights);
  }

  private w(name: string): tf.Tensor2D {
    return this.weights[name] as tf.Tensor2D;
  }

  /** The last hidden layer's activations: [B, inputSize] -> [B, last width]. */
  hidden(features: tf.Tensor2D): tf.Tensor2D {
    if (features.rank !== 2 || features.shape[1] !== this.config.inputSize) {
      throw new Error(`mlp: features must be [B, ${this.config.inputSize}], got [${features.shape}]`);
    }
    const relu = this.config.activation === 'relu';
    return tf.tidy(() => {
      let x: tf.Tensor = features;
      for (let i = 0; i < this.config.hiddenSizes.length; i++) {
        const y = linear(x, this.w(`l${i}.w`), this.w(`l${i}.b`));
        x = relu ? tf.relu(y) : tf.tanh(y);
      }
      return x as tf.Tensor2D;
    });
  }

  /** Action logits: [B, inputSize] -> [B, numActions]. */
  logits(features: tf.Tensor2D): tf.Tensor2D {
    return tf.tidy(() => linear(this.hidden(features), this.w('pi.w'), this.w('pi.b')) as tf.Tensor2D);
  }

  /** The value head's estimate of each row: [B, inputSize] -> [B]. */
  values(features: tf.Tensor2D): tf.Tensor1D {
    return tf.tidy(() => this.valuesOf(this.hidden(features)));
  }

  private valuesOf(h: tf.Tensor2D): tf.Tensor1D {
    if (!this.hasValueHead) throw new Error('mlp: this model has no value head (set valueHead: true)');
    return linear(h, this.w('value.w'), this.w('value.b')).reshape([-1]) as tf.Tensor1D;
  }

  /** Checks every row's length and builds [B, inputSize]; the error names the first bad row. */
  private featureTensor(rows: readonly (readonly number[])[]): tf.Tensor2D {
    if (rows.length === 0) throw new Error('mlp: no rows given');
    const n = this.config.inputSize;
    const flat = new Float32Array(rows.length * n);
    rows.forEach((r, b) => {
      if (r.length !== n) throw new Error(`mlp: row ${b} has ${r.length} features, expected inputSize ${n}`);
      flat.set(r, b * n);
    });
    return tf.tensor2d(flat, [rows.length, n]);
  }

  /**
   * Picks one action per row on the host. Illegal actions get logit -1e9 (probability 0);
   * an all-illegal row is an error. Returns plain numbers and leaves no tensors behind.
   */
  act(features: number[][], opts: ActOptions = {}): ActResult {
    const { temperature = 1, legal, seed } = opts;
    validateSampling({ temperature });
    const A = this.config.numActions;
    if (legal && legal.length !== features.length)
      throw new Error(`mlp: legal has ${legal.length} rows, features has ${features.length}`);
    const { logits, values } = tf.tidy(() => {
      const h = this.hidden(this.featureTensor(features));
      const l = linear(h, this.w('pi.w'), this.w('pi.b'));
      return {
        logits: l.dataSync() as Float32Array,
        values: this.hasValueHead ? this.valuesOf(h).dataSync() : undefined,
      };
    });
    const rng = seed === undefined ? this.rng : new Rng(seed);
    const actions: number[] = [];
    const logProbs: number[] = [];
    const entropies: number[] = [];
    for (let b = 0; b < features.length; b++) {
      const row = logits.slice(b * A, (b + 1) * A);
      if (legal) {
        if (legal[b].length !== A)
          throw new Error(`mlp: legal row ${b} has ${legal[b].length} entries, expected numActions ${A}`);
        if (!legal[b].some(Boolean)) throw new Error(`mlp: row ${b} has no legal action`);
        legal[b].forEach((ok, a) => {
          if (!ok) row[a] = NEG;
        });
      }
      const { token, logProb, entropy } = sampleToken(row, { temperature }, rng);
      actions.push(token);
      logProbs.push(logProb);
      entropies.push(entropy);
    }
    return { actions, logProbs, entropies, ...(values ? { values: Array.from(values) } : {}) };
  }

  /**
   * See Policy.score: `prompt` is the feature vector, `completion` is `[action]`; every
   * tensor is [B, 1]. A row's `legal` mask is applied as `act` applies it (logit -1e9), so
   * log-probs, entropies and hence PPO ratios are those of the distribution that acted;
   * scoring an illegal action is an error.
   */
  score(inputs: readonly PolicyInput[], temperature = 1): ScoredBatch {
    if (!(temperature > 0) || !Number.isFinite(temperature))
      throw new Error(`mlp: score temperature must be > 0, got ${temperature}`);
    const A = this.config.numActions;
    const actions = inputs.map((r, b) => {
      if (r.completion.length !== 1)
        throw new Error(`mlp: row ${b} completion must be exactly one action, got ${r.completion.length}`);
      const a = r.completion[0];
      if (!Number.isInteger(a) || a < 0 || a >= A) throw new Error(`mlp: row ${b} action ${a} is not in [0, ${A})`);
      if (r.legal) {
        if (r.legal.length !== A)
          throw new Error(`mlp: row ${b} legal has ${r.legal.length} entries, expected numActions ${A}`);
        if (!r.legal[a]) throw new Error(`mlp: row ${b} scores action ${a}, which its legal mask forbids`);
      }
      return a;
    });
    const masked = inputs.some((r) => r.legal);
    const bias = masked
      ? Float32Array.from(inputs.flatMap((r) => (r.legal ? r.legal.map((ok) => (ok ? 0 : NEG)) : new Array(A).fill(0))))
      : undefined;
    // tidy keeps only the returned tensors, so calling score outside a tidy leaks nothing.
    return tf.tidy(() => {
      const h = this.hidden(this.featureTensor(inputs.map((r) => r.prompt)));
      const raw = linear(h, this.w('pi.w'), this.w('pi.b')).reshape([-1, 1, A]) as tf.Tensor3D;
      const scaled = temperature === 1 ? raw : (raw.div(temperature) as tf.Tensor3D);
      // illegal logits at -1e9, as in act: their probability is exactly 0 at any temperature
      const logits = bias ? (scaled.add(tf.tensor3d(bias, [inputs.length, 1, A])) as tf.Tensor3D) : scaled;
      const B = inputs.length;
      const out: ScoredBatch = {
        logProbs: tokenLogProbs(logits, tf.tensor2d(actions, [B, 1], 'int32')),
        entropy: tokenEntropy(logits),
        mask: tf.ones([B, 1]) as tf.Tensor2D,
      };
      if (this.hasValueHead) out.values = this.valuesOf(h).reshape([B, 1]) as tf.Tensor2D;
      return out as unknown as tf.TensorContainer;
    }) as unknown as ScoredBatch;
  }

  dispose(): void {
    for (const v of Object.values(this.weights)) v.dispose();
  }
}
