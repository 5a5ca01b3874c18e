import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExperiment } from '../../src/engine/experiment.js';
import { tinyConfig } from './fixtures.js';

/** the run's log lines, for a tiny run evaluated every iteration (8 held-out tasks, 2 samples when thorough) */
async function logOf(iterations: number, evalNoteMs?: number): Promise<string[]> {
  const out = mkdtempSync(join(tmpdir(), 'coevolve-evalnote-'));
  const lines: string[] = [];
  await runExperiment(tinyConfig(out, { iterations, eval: { every: 1, samples: 2 } }), {
    out: join(out, 'run'),
    log: (l) => lines.push(l),
    evalNoteMs,
  });
  return lines;
}

describe('a long evaluation says how far it got', function () {
  this.timeout(60000);

  it('notes the episodes done as they end, then how long the evaluation took', async () => {
    // a note interval of 0 ms: every episode is past it, so each is noted
    const lines = await logOf(2, 0);
    const at1 = lines.filter((l) => l.startsWith('evaluating tasks.eval at iteration 1: '));
    // iteration 1 is periodic, greedy only: 8 episodes, counted up
    expect(at1.map((l) => Number(/: (\d+) episodes in/.exec(l)![1]))).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8]);
    const after = lines.slice(lines.indexOf(at1[7]) + 1);
    expect(after[0]).to.match(/^evaluated tasks\.eval in \d/);
    // the last one is thorough: 8 greedy and 16 sampled episodes
    const at2 = lines.filter((l) => l.startsWith('evaluating tasks.eval at iteration 2: '));
    expect(at2).to.have.length(24);
  });

  it('stays quiet on a short periodic evaluation', async () => {
    const lines = await logOf(3);
    expect(lines.filter((l) => /tasks\.eval at iteration [12]/.test(l))).to.deep.equal([]);
    expect(lines.filter((l) => l.startsWith('evaluated tasks.eval in '))).to.have.length(2); // the first and the last
  });
});
