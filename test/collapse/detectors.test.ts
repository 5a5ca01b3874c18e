import { expect } from 'chai';
import {
  constantVerdict,
  entropyCollapse,
  heldOutFalls,
  oneCell,
  type Detector,
} from '../../src/collapse/detectors.js';
import { CollapseSchema, DEFAULT_COLLAPSE } from '../../src/collapse/options.js';
import { bestCheckpoint, CollapseWatch, watchedMetric } from '../../src/collapse/watch.js';
import type { MetricsRow } from '../../src/store/run.js';

/** Rows 0..n-1 from per-iteration columns (undefined: not measured that iteration). */
function rows(n: number, cols: Record<string, (i: number) => number | undefined>): MetricsRow[] {
  return Array.from({ length: n }, (_, i) => {
    const r: MetricsRow = { iteration: i };
    for (const [k, f] of Object.entries(cols)) {
      const v = f(i);
      if (v !== undefined) r[k] = v;
    }
    return r;
  });
}

const read = (d: Detector, rs: MetricsRow[], o = DEFAULT_COLLAPSE) => d.read(rs, o);
const every = (k: number, f: (i: number) => number) => (i: number) => (i % k === 0 ? f(i) : undefined);
const options = (over: object) => CollapseSchema.parse(over);

describe('collapse detectors', () => {
  it('held-out falls while the reward rises or holds: flagged; the same fall with the reward falling too: not', () => {
    const pass1 = every(5, (i) => (i < 10 ? 0.5 : 0.3));
    const rising = rows(16, { 'eval/pass1': pass1, 'reward/solver': (i) => (i === 0 ? undefined : 0.1 * i) });
    const r = read(heldOutFalls, rising)!;
    expect(r.flagged).to.equal(true);
    expect(r.value).to.be.closeTo(0.2, 1e-12);
    expect(r.detail).to.include('eval/pass1 0.300 at 15, from its best 0.500 at 5').and.include('reward/solver');
    const falling = rows(16, { 'eval/pass1': pass1, 'reward/solver': (i) => (i === 0 ? undefined : 2 - 0.1 * i) });
    expect(read(heldOutFalls, falling)!.flagged).to.equal(false);
    // a flat reward, up and down by its noise (a judge at chance pays about half of anything), holds
    const flat = rows(16, {
      'eval/pass1': pass1,
      'reward/solver': (i) => (i === 0 ? undefined : 0.5 + (i % 2 ? 0.05 : -0.05)),
    });
    expect(read(heldOutFalls, flat)!.flagged).to.equal(true);
  });

  it('held-out falls: a fall under the thresholds is noise, and a best at the start compares windows that do not overlap', () => {
    const small = rows(16, { 'eval/pass1': every(5, (i) => (i < 10 ? 0.5 : 0.42)), 'reward/x': (i) => i });
    expect(read(heldOutFalls, small)!.flagged).to.equal(false); // 0.08 < drop 0.1
    const low = rows(16, { 'eval/pass1': every(5, (i) => (i < 10 ? 0.5 : 0.39)), 'reward/x': (i) => i });
    expect(read(heldOutFalls, low, options({ heldOut: { relative: 0.3 } }))!.flagged).to.equal(false); // 22% of the best
    // best at iteration 0, first fall at 5: the reward's first window (1-5) against itself has not risen
    const reward = (i: number) => (i === 0 ? undefined : i); // iteration 0 is the evaluation before training
    const early = rows(6, { 'eval/pass1': every(5, (i) => (i === 0 ? 0.5 : 0.1)), 'reward/x': reward });
    expect(read(heldOutFalls, early)!.flagged).to.equal(false);
    const later = rows(11, { 'eval/pass1': every(5, (i) => (i === 0 ? 0.5 : 0.1)), 'reward/x': reward });
    expect(read(heldOutFalls, later)!.flagged).to.equal(true);
  });

  it('constant verdict: flagged after `patience` measurements at the share, not after fewer', () => {
    const high = (from: number) => (i: number) => (i >= from ? 0.95 : 0.5);
    expect(read(constantVerdict, rows(10, { 'judge/constant_verdict': high(7) }))!.flagged).to.equal(true);
    expect(read(constantVerdict, rows(10, { 'judge/constant_verdict': high(8) }))!.flagged).to.equal(false);
    // held out too, by its own measurements (every 5 iterations)
    const held = rows(16, { 'eval/judge/constant_verdict': every(5, (i) => (i >= 10 ? 1 : 0.4)) });
    expect(read(constantVerdict, held)!.flagged).to.equal(false); // 2 of 3 measured at 1
    expect(read(constantVerdict, held, options({ verdict: { patience: 2 } }))!.flagged).to.equal(true);
  });

  it('one cell: the mean share over the window', () => {
    const stuck = rows(10, { 'proposals/top_cell_share': (i) => (i >= 5 ? 1 : 0.4) });
    expect(read(oneCell, stuck)!).to.include({ value: 1, flagged: true });
    const varied = rows(10, { 'proposals/top_cell_share': (i) => (i % 2 ? 1 : 0.5) });
    expect(read(oneCell, varied)!.flagged).to.equal(false);
  });

  it('entropy: the last window against the first, read once they do not overlap', () => {
    const decay = (i: number) => (i === 0 ? undefined : 0.5 * Math.exp(-i / 10));
    expect(read(entropyCollapse, rows(20, { 'rollout/entropy': decay }))).to.equal(undefined); // 19 values < 2 windows
    expect(read(entropyCollapse, rows(30, { 'rollout/entropy': decay }))!.flagged).to.equal(false);
    const r = read(entropyCollapse, rows(50, { 'rollout/entropy': decay }))!;
    expect(r.flagged).to.equal(true);
    expect(r.value).to.be.below(0.1);
  });

  it('the watch logs readings, flags and a first flag once; its own metrics are never read back', () => {
    const watch = new CollapseWatch(options({ verdict: { patience: 1 } }));
    const a = watch.observe({ iteration: 1, 'judge/constant_verdict': 0.95 });
    expect(a.metrics).to.deep.equal({
      'collapse/verdict_constancy': 0.95,
      'collapse/constant_verdict': 1,
      'collapse/flagged': 1,
    });
    expect(a.fresh.map((f) => f.id)).to.deep.equal(['constant_verdict']);
    const b = watch.observe({ iteration: 2, 'judge/constant_verdict': 0.97, ...a.metrics });
    expect(b.flagged).to.have.length(1);
    expect(b.fresh).to.deep.equal([]);
    expect(watch.first.get('constant_verdict')!.iteration).to.equal(1);
  });

  it('the best checkpoint: the highest watched metric among the start and the checkpoints', () => {
    const rs = rows(31, { 'eval/pass1': every(5, (i) => [0.3, 0.6, 0.5, 0.4, 0.35, 0.2, 0.1][i / 5]) });
    const cps = [10, 20, 30].map((iteration) => ({ iteration, dir: `checkpoints/iter-${iteration}` }));
    // 0.6 at 5 was never saved: the best saved is 10
    expect(bestCheckpoint(rs, cps, 'eval/pass1')).to.deep.equal({
      metric: 'eval/pass1',
      iteration: 10,
      dir: 'checkpoints/iter-10',
      value: 0.5,
    });
    expect(bestCheckpoint(rs, cps.slice(2), 'eval/pass1')).to.deep.equal({
      metric: 'eval/pass1',
      iteration: 0,
      dir: undefined,
      value: 0.3,
    });
    expect(watchedMetric([{ iteration: 0, 'eval/judge/accuracy': 0.5, 'eval/pass1': 0.4 }])).to.equal('eval/pass1');
    expect(watchedMetric([{ iteration: 0, 'eval/judge/accuracy': 0.5 }])).to.equal('eval/judge/accuracy');
    expect(watchedMetric([{ iteration: 0, 'eval/pass1': 0.4 }], 'eval/maj16')).to.equal('eval/maj16');
  });
});
