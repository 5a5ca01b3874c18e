import type { Episode } from '../src/core/types.js';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * What the memory-dialogue arena's roles did: `memory/qa_accuracy` (the final questions),
 * `memory/probe_accuracy` (re-rollout probes), `memory/valid_rate` and the share of each
 * operation among valid manager turns (`memory/op_add` ...), `memory/bank_size` at the end.
 */
export function memoryMetrics(episodes: readonly Episode[]): Record<string, number> {
  const m: Record<string, number> = {};
  const answers = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'answer' && t.task));
  const right = (t: (typeof answers)[number]) => (t.action.valid && t.action.value === t.task!.answer ? 1 : 0);
  const finals = answers.filter((t) => /\/q\d+$/.test(t.task!.id));
  const probes = answers.filter((t) => /\/s\d+\/p\d+$/.test(t.task!.id));
  if (finals.length) m['memory/qa_accuracy'] = mean(finals.map(right));
  if (probes.length) m['memory/probe_accuracy'] = mean(probes.map(right));
  if (answers.length) m['memory/answer_valid_rate'] = mean(answers.map((t) => (t.action.valid ? 1 : 0)));
  const ops = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'memory'));
  if (ops.length) {
    const valid = ops.filter((t) => t.action.valid);
    m['memory/valid_rate'] = valid.length / ops.length;
    for (const op of ['ADD', 'UPDATE', 'DELETE', 'NOOP'])
      m[`memory/op_${op.toLowerCase()}`] = valid.length
        ? valid.filter((t) => t.action.value!.startsWith(op)).length / valid.length
        : 0;
  }
  const sizes = episodes.map((e) => e.info?.bank_size).filter((s): s is number => typeof s === 'number');
  if (sizes.length) m['memory/bank_size'] = mean(sizes);
  return m;
}
