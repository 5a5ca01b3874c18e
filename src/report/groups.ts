import type { MetricsRow } from '../store/run.js';

/** One chart: a title and the metric keys drawn on it. */
export interface ChartGroup {
  id: string;
  title: string;
  keys: string[];
}

// First rule that matches a key places it; the rest fall to their prefix. Keys that only
// count or label (samples, phase, skipped updates) are not charted.
const RULES: Array<{ id: string; title: string; test: (k: string) => boolean }> = [
  { id: 'rewards', title: 'Rewards per role', test: (k) => k.startsWith('reward/') },
  { id: 'accuracy', title: 'Accuracy', test: (k) => k.startsWith('accuracy/') || /^eval\/(pass1|maj\d+)$/.test(k) },
  { id: 'loss', title: 'Policy loss per model', test: (k) => /^losses\/[^/]+\/loss$/.test(k) },
  { id: 'grad-norm', title: 'Gradient norm per model', test: (k) => /^losses\/[^/]+\/grad_norm$/.test(k) },
  { id: 'clipfrac', title: 'Clipped fraction per model', test: (k) => /^losses\/[^/]+\/clipfrac$/.test(k) },
  { id: 'kl', title: 'KL to the reference', test: (k) => k.startsWith('kl/') },
  { id: 'entropy', title: 'Entropy and self-certainty', test: (k) => /^rollout\/(entropy|self_certainty)$/.test(k) },
  { id: 'throughput', title: 'Throughput (tokens/s)', test: (k) => /^time\/.*tokens_per_s$/.test(k) },
  { id: 'time', title: 'Time per iteration (s)', test: (k) => /^time\/.*_s$/.test(k) },
  { id: 'turns', title: 'Turns per role', test: (k) => k.startsWith('turns/') },
  { id: 'lr', title: 'Learning rate', test: (k) => k === 'lr' },
  { id: 'collapse', title: 'Collapse watch (docs/collapse.md)', test: (k) => k.startsWith('collapse/') },
];
const SKIP = (k: string) => k === 'iteration' || k === 'samples' || k === 'phase' || /^losses\/[^/]+\/skipped$/.test(k);

/**
 * The charts of a run's metrics: the fixed groups above (rewards, accuracy, losses, KL,
 * entropy, throughput...), then one chart per evaluator (`eval/<name>/...`) and one per other
 * prefix (an arena's own metrics: `judge/...`, `memory/...`, `proposals/...`), in that order.
 * Only keys with a finite number somewhere are charted.
 */
export function chartGroups(rows: readonly MetricsRow[]): ChartGroup[] {
  const keys = [
    ...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => typeof r[k] === 'number' && Number.isFinite(r[k])))),
  ]
    .filter((k) => !SKIP(k))
    .sort();
  const groups = new Map<string, ChartGroup>(RULES.map((r) => [r.id, { id: r.id, title: r.title, keys: [] }]));
  for (const k of keys) {
    const rule = RULES.find((r) => r.test(k));
    const named = /^eval\/([^/]+)\/.+$/.exec(k);
    const [id, title] = rule
      ? [rule.id, rule.title]
      : named
        ? [`eval-${named[1]}`, `Evaluation: ${named[1]}`]
        : k.includes('/')
          ? [k.slice(0, k.indexOf('/')), `${k.slice(0, k.indexOf('/'))} (the arena's metrics)`]
          : ['other', 'Other'];
    if (!groups.has(id)) groups.set(id, { id, title, keys: [] });
    groups.get(id)!.keys.push(k);
  }
  return [...groups.values()].filter((g) => g.keys.length > 0);
}
