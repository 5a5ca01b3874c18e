/**
 * The recorded collapses and healthy runs, replayed through the collapse watch with its
 * defaults (test/fixtures/collapse: metrics.jsonl cut to the columns the detectors read, by
 * experiments/collapse-traces.ts; where each run came from is in docs/collapse.md).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CollapseSchema, DEFAULT_COLLAPSE } from '../../src/collapse/options.js';
import { replay } from '../../src/collapse/watch.js';
import type { MetricsRow } from '../../src/store/run.js';

const trace = (name: string): MetricsRow[] =>
  readFileSync(new URL(`../fixtures/collapse/${name}.jsonl`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as MetricsRow);

/**
 * When a held-out collapse is complete: the first evaluation that has come 90% of the way from
 * the start to where the run ends.
 */
function completedAt(rows: readonly MetricsRow[], key = 'eval/pass1'): number {
  const s = rows.filter((r) => typeof r[key] === 'number').map((r) => [r.iteration, r[key] as number] as const);
  const [start, end] = [s[0][1], s[s.length - 1][1]];
  return s.find(([, v]) => v <= end + 0.1 * (start - end))![0];
}

describe('the collapse watch on recorded runs (defaults)', () => {
  it('self-certainty (0.363 to 0.008): held-out falling while the reward rises, flagged before the fall completes; then the entropy', () => {
    const rows = trace('self-certainty');
    const { watch } = replay(rows, DEFAULT_COLLAPSE);
    const falls = watch.first.get('held_out_falls')!;
    expect(falls.iteration).to.equal(10);
    expect(falls.iteration).to.be.below(completedAt(rows));
    expect(falls.detail).to.include('reward/solver');
    // the policy's entropy goes to a tenth of its start by iteration 103 of 200
    const entropy = watch.first.get('entropy_collapse')!;
    expect(entropy.iteration).to.be.within(90, 120);
    expect([...watch.first.keys()].sort()).to.deep.equal(['entropy_collapse', 'held_out_falls']);
  });

  it('the judge-paid solver on the chat base (0.488 to 0.125): flagged at the first evaluation that shows the fall, before the run ends', () => {
    const rows = trace('judge-paid-solver');
    const { watch } = replay(rows, DEFAULT_COLLAPSE);
    const falls = watch.first.get('held_out_falls')!;
    // the judge trains for 10 iterations, the solver from 11; 0.453 at 15 is within noise, 0.125 at 20 is not
    const firstFall = rows.find((r) => (r['eval/pass1'] as number) <= 0.488 - 0.1)!.iteration;
    expect(falls.iteration).to.equal(firstFall).and.equal(20);
    expect(falls.iteration).to.be.below(rows[rows.length - 1].iteration);
    expect(falls.detail).to.include('reward/solver');
    // its judge is at chance, not constant: a coin's verdicts are not one verdict
    expect(watch.first.has('constant_verdict')).to.equal(false);
  });

  it('TTRL on the chat base (0.543 at 10 and 20, 0.434 at 60 as its vote reward rose): flagged at 60, which the old relative 0.25 missed', () => {
    const rows = trace('hf-ttrl');
    const { watch } = replay(rows, DEFAULT_COLLAPSE);
    const falls = watch.first.get('held_out_falls')!;
    // 0.520 at 30 and 0.508 at 40 are within noise of the best; 0.434 is 0.109 (20%) below it
    expect(falls.iteration).to.equal(60);
    expect(falls.detail).to.include('reward/solver');
    expect(
      replay(rows, CollapseSchema.parse({ heldOut: { relative: 0.25 } })).watch.first.has('held_out_falls'),
    ).to.equal(false);
  });

  it('healthy RLVR on the chat base (LoRA, 0.488 to 0.688): nothing flagged at any iteration', () => {
    const rows = trace('hf-rlvr-lora');
    const { watch, watched } = replay(rows, DEFAULT_COLLAPSE);
    expect(watch.first.size).to.equal(0);
    expect(watched.every((w) => w.metrics['collapse/flagged'] === 0)).to.equal(true);
    // the watch did read it: held-out and entropy readings, far from their thresholds
    const last = watched[watched.length - 1].metrics;
    expect(last['collapse/held_out_drop']).to.be.below(0.05);
    expect(last['collapse/entropy_ratio']).to.be.above(0.5);
  });

  it('healthy RLVR on the add2 base (0.363 to 0.516 by 150): its early dip and its sharpening stay under the defaults, not under looser ones', () => {
    const rows = trace('rlvr-add2');
    const { watch, watched } = replay(rows, DEFAULT_COLLAPSE);
    expect(watch.first.size).to.equal(0);
    expect(watched.every((w) => w.metrics['collapse/flagged'] === 0)).to.equal(true);
    // the dip: 0.363 to 0.285 at its first evaluation, while the verifier's reward rose; flagged at half the thresholds
    const loose = replay(rows, CollapseSchema.parse({ heldOut: { drop: 0.05, relative: 0.1 } })).watch;
    expect(loose.first.get('held_out_falls')!.iteration).to.equal(10);
    // its entropy halves as it learns: flagged were the threshold a half
    const sharp = replay(rows, CollapseSchema.parse({ entropy: { ratio: 0.5 } })).watch;
    expect(sharp.first.has('entropy_collapse')).to.equal(true);
  });
});
