import type * as tf from '@tensorflow/tfjs';

/**
 * One item to score: for a language model, `prompt` and `completion` are token ids; for an
 * MLP policy, `prompt` is the feature vector and `completion` is `[action]`.
 */
export interface PolicyInput {
  prompt: readonly number[];
  completion: readonly number[];
  /** for an MLP policy: which actions were legal (as `act` was told), so scoring masks the same ones */
  legal?: readonly boolean[];
}

/**
 * What a policy returns when scoring a batch inside a gradient tape. Every tensor is
 * [B, Tc]: completion token j of row b sits in column j; `mask` is 1 there and 0 on padding.
 */
export interface ScoredBatch {
  logProbs: tf.Tensor2D;
  entropy: tf.Tensor2D;
  mask: tf.Tensor2D;
  /** the value head's estimate before each completion token, when the model has one */
  values?: tf.Tensor2D;
}

/** Anything the trainer can update. */
export interface Policy {
  readonly kind: string;
  /** the variables an update of this model may change, and only these */
  variables(): tf.Variable[];
  /** per-token log-probs, entropy and values of each input's completion; call inside a tape */
  score(inputs: readonly PolicyInput[], temperature?: number): ScoredBatch;
  /** weights of the squares a gradient-norm clip sums, by variable name, where a variable stands for tied rows (src/rl/apply.ts) */
  gradNormWeights?(): Record<string, tf.Tensor> | undefined;
  readonly hasValueHead: boolean;
  /**
   * the longest sequence one scoring pass takes, if bounded: a pass lays out every row as the
   * longest prompt then the longest completion, so a batch whose rows fit one by one may not
   */
  readonly maxSequence?: number;
  dispose(): void;
}

/** Builds the [B, Tc] mask and a padded copy of per-token numbers laid out like ScoredBatch. */
export function padRows(rows: readonly (readonly number[])[], width: number, fill = 0): Float32Array {
  const out = new Float32Array(rows.length * width).fill(fill);
  rows.forEach((row, b) => {
    if (row.length > width) throw new Error(`row ${b} has ${row.length} entries, more than ${width}`);
    out.set(row, b * width);
  });
  return out;
}

/**
 * `batch` cut, in order, into passes of at most `size` rows whose longest prompt and longest
 * completion fit `maxSequence` together (as a pass lays them out): rows that fit one by one
 * (a long prompt with a short answer beside a short prompt with a long one) may not share a
 * pass. The gradients of the passes add up to the whole batch's either way.
 */
export function microBatches<T>(
  batch: readonly T[],
  size: number,
  maxSequence: number,
  row: (x: T) => PolicyInput = (x) => x as PolicyInput,
): T[][] {
  const parts: T[][] = [];
  let part: T[] = [],
    prompt = 0,
    completion = 1;
  for (const x of batch) {
    const { prompt: rp, completion: rc } = row(x);
    const [p, c] = [Math.max(prompt, rp.length), Math.max(completion, rc.length)];
    if (part.length && (part.length === size || p + c - 1 > maxSequence)) {
      parts.push(part);
      [part, prompt, completion] = [[], 0, 1];
    }
    part.push(x);
    [prompt, completion] = [Math.max(prompt, rp.length), Math.max(completion, rc.length)];
  }
  if (part.length) parts.push(part);
  return parts;
}
