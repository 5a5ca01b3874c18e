import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportCommand } from '../../src/report/text.js';
import { parseConfig } from '../../src/config/load.js';
import { RunStore } from '../../src/store/run.js';
import { tinyConfig } from '../engine/fixtures.js';

describe('coevolve report', () => {
  it('shows every evaluation and, for a proposer, its difficulty averaged since the row before', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'coevolve-report-')), 'run');
    const store = await RunStore.create(dir, parseConfig(tinyConfig(dir)));
    store.appendMetrics({ iteration: 0, 'eval/harder/pass1': 0.25 });
    store.appendMetrics({ iteration: 1, 'proposals/digits': 1, 'time/iteration_s': 2 });
    store.appendMetrics({ iteration: 2, 'proposals/digits': 2, 'eval/harder/pass1': 0.5, 'time/iteration_s': 2 });
    store.close();
    const lines = (await reportCommand(dir)).split('\n').map((l) => l.split('\t'));
    expect(lines[0]).to.deep.equal(['iteration', 'eval/harder/pass1', 'proposals/digits *', 'elapsed_s']);
    expect(lines[1]).to.deep.equal(['0', '0.250', '', '0']);
    expect(lines[2]).to.deep.equal(['2', '0.500', '1.500', '4']);
  });
});
