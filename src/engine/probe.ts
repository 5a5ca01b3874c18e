import { rolePrompt } from '../core/prompt.js';
import type { Role } from '../core/role.js';
import * as tf from '@tensorflow/tfjs';
import type { Task } from '../core/types.js';
import type { Policy, PolicyInput } from '../models/types.js';
import { padRows } from '../models/types.js';
import type { Tokenizer } from '../tokenizer/types.js';

/** A chunk: completions with one advantage each, as the policy-gradient update would see them. */
export type ProbeChunk = readonly (PolicyInput & { advantage: number })[];

/**
 * How much training on each chunk would improve a model on a probe set, to first order:
 * the policy-gradient step on a chunk moves the weights by `-lr · g_chunk`, which changes the
 * probe loss (the negative log-likelihood of the probe answers) by `-lr · g_probe · g_chunk`.
 * So the improvement per unit of learning rate is `g_probe · g_chunk`; it is returned divided
 * by |g_probe| (the chunk's progress along the probe's own direction). This is SOAR's grounded
 * reward measured by one gradient each instead of a trial update per chunk. No weight moves.
 */
export class GradientProbe {
  private readonly inputs: PolicyInput[];

  /** `role`: whose prompts the probe's tasks are (with `system`, its config's system message) */
  constructor(
    private readonly model: Policy,
    tokenizer: Tokenizer,
    probe: readonly Task[],
    role: Pick<Role, 'kind' | 'token' | 'instructions'>,
    private readonly temperature: number,
    system?: string,
  ) {
    if (probe.length === 0) throw new Error('probe: the probe set is empty');
    this.inputs = probe.map((t) => {
      if (t.answer === undefined) throw new Error(`probe: task ${t.id} has no answer`);
      return {
        prompt: rolePrompt(tokenizer, role, t.prompt, system ?? t.system),
        completion: [...tokenizer.encode(t.answer), tokenizer.eos],
      };
    });
  }

  /** g_probe · g_chunk / |g_probe| for each chunk (0 for an empty chunk). */
  alignment(chunks: readonly ProbeChunk[]): number[] {
    const probe = this.gradient(() => {
      const s = this.model.score(this.inputs, this.temperature);
      return s.logProbs.mul(s.mask).sum().div(s.mask.sum()).neg() as tf.Scalar;
    });
    const norm = Math.sqrt(dot(probe, probe));
    const out = chunks.map((chunk) => {
      if (chunk.length === 0 || norm === 0) return 0;
      const g = this.gradient(() => {
        const s = this.model.score(chunk, this.temperature);
        const width = s.mask.shape[1];
        const adv = tf.tensor2d(
          padRows(
            chunk.map((it) => it.completion.map(() => it.advantage)),
            width,
          ),
          [chunk.length, width],
        );
        // the policy-gradient loss at ratio 1, token-mean (what the clipped loss reduces to on a fresh sample)
        return s.logProbs.mul(adv).mul(s.mask).sum().div(s.mask.sum()).neg() as tf.Scalar;
      });
      const d = dot(probe, g) / norm;
      tf.dispose(Object.values(g));
      return d;
    });
    tf.dispose(Object.values(probe));
    return out;
  }

  private gradient(loss: () => tf.Scalar): tf.NamedTensorMap {
    const { value, grads } = tf.variableGrads(loss, this.model.variables());
    value.dispose();
    return grads;
  }
}

function dot(a: tf.NamedTensorMap, b: tf.NamedTensorMap): number {
  return tf.tidy(
    () =>
      Object.keys(a)
        .reduce((acc, k) => acc.add(a[k].mul(b[k]).sum()), tf.scalar(0))
        .dataSync()[0],
  );
}
