import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { studyCommand } from '../../src/cli/study.js';
import { playStudy } from '../../src/study/run.js';
import { loadStudy } from '../../src/study/schema.js';
import { curve, f3, summarise } from '../../src/study/summary.js';
import { tinyConfig, tinyPretrainInput } from '../engine/fixtures.js';

describe('coevolve study: conditions x seeds, resumable, summarised on one metric', function () {
  this.timeout(240000);

  it('plays every run once, skips finished ones, and summarises each condition over its seeds', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-study-'));
    writeFileSync(join(root, 'tiny.yaml'), stringify(tinyConfig(join(root, 'unused'), { iterations: 2 })));
    const file = join(root, 'study.yaml');
    writeFileSync(
      file,
      stringify({
        name: 's',
        outDir: root,
        seeds: [1, 2],
        metric: 'eval/pass1',
        also: ['reward/solver'],
        conditions: {
          base: { config: join(root, 'tiny.yaml') },
          slow: { config: join(root, 'tiny.yaml'), set: ['trainer.lr=1e-5'] },
        },
      }),
    );
    expect(await studyCommand(file, {})).to.equal(0);
    const s = loadStudy(file);
    const rows = summarise(s);
    expect(rows.map((r) => [r.condition, r.seeds])).to.deep.equal([
      ['base', [1, 2]],
      ['slow', [1, 2]],
    ]);
    // each figure is the run's own last measurement, and the seed is the run's
    const dir = join(root, 's', 'slow-s2');
    expect(rows[1].values[1]).to.equal(curve(dir, 'eval/pass1').at(-1)![1]);
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8'))
      .to.match(/^seed: 2$/m)
      .and.match(/^name: slow-s2$/m)
      .and.match(/lr: 0\.00001/);
    expect(rows[0].also['reward/solver']).to.be.a('number');
    const summary = readFileSync(join(root, 's', 'summary.md'), 'utf8');
    expect(summary).to.match(/\| base \| eval\/pass1 \| 1, 2 \|/);
    // a second call starts nothing: every run is done
    const before = statSync(join(dir, 'run.json')).mtimeMs;
    expect(await studyCommand(file, { only: ['slow'] })).to.equal(0);
    expect(statSync(join(dir, 'run.json')).mtimeMs).to.equal(before);
  });

  it('makes a missing base once, before its runs start side by side, each of which then finds it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-study-'));
    const configs = join(root, 'configs');
    mkdirSync(configs);
    const base = join(root, 'base');
    writeFileSync(join(configs, 'pretrain-b.yaml'), stringify(tinyPretrainInput(base)));
    const tiny = tinyConfig(join(root, 'unused'), { iterations: 1, models: { main: { checkpoint: base } } });
    writeFileSync(join(root, 'tiny.yaml'), stringify(tiny));
    const file = join(root, 'study.yaml');
    writeFileSync(
      file,
      stringify({
        name: 's',
        outDir: root,
        seeds: [1, 2],
        parallel: 2,
        metric: 'eval/pass1',
        conditions: { a: { config: join(root, 'tiny.yaml') } },
      }),
    );
    const lines: string[] = [];
    const failures = await playStudy(loadStudy(file), { bin: 'bin/coevolve.js', configs, log: (l) => lines.push(l) });
    expect(failures.map((f) => f.message)).to.deep.equal([]);
    expect(lines.filter((l) => /is missing: making it first/.test(l))).to.deep.equal([
      `${base} is missing: making it first with coevolve pretrain ${join(configs, 'pretrain-b.yaml')}`,
    ]);
    expect(existsSync(join(base, 'model.json'))).to.equal(true);
    expect(readFileSync(join(root, 's', 'pretrain-b.log'), 'utf8')).to.match(/step 2 /);
    for (const seed of [1, 2]) {
      expect(JSON.parse(readFileSync(join(root, 's', `a-s${seed}`, 'run.json'), 'utf8')).status).to.equal('done');
      expect(readFileSync(join(root, 's', `a-s${seed}.log`), 'utf8')).not.to.match(/is missing/);
    }
  });

  it('a study file with a mistake is refused, naming the field; an unknown condition too', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-study-'));
    const file = join(root, 'bad.yaml');
    writeFileSync(file, stringify({ name: 'x', seeds: [1], conditions: { a: { config: 'c.yaml', sett: [] } } }));
    const message = (() => {
      try {
        loadStudy(file);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    })();
    expect(message).to.match(/metric: /);
    expect(message).to.match(/conditions\.a\.sett: unrecognized key \(did you mean "set"\?\)/);
    writeFileSync(file, stringify({ name: 'x', outDir: root, metric: 'm', conditions: { a: { config: 'c.yaml' } } }));
    const unknown = await studyCommand(file, { only: ['b'] }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(unknown).to.equal("study: unknown condition 'b'; known: a");
    // a condition whose override is wrong is refused before any run starts
    writeFileSync(join(root, 'tiny.yaml'), stringify(tinyConfig(join(root, 'unused'), { iterations: 2 })));
    writeFileSync(
      file,
      stringify({
        name: 'y',
        outDir: root,
        metric: 'm',
        conditions: {
          a: { config: join(root, 'tiny.yaml') },
          b: { config: join(root, 'tiny.yaml'), set: ['trainer.lrr=1'] },
          c: { config: join(root, 'tiny.yaml'), set: ['judges.0.options.rol=solver'] },
        },
      }),
    );
    const wrong = await studyCommand(file, {}).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(wrong).to.match(/^study: condition 'b': .*trainer\.lrr/s);
    // a kind's options are checked too, as `coevolve run` checks them
    const kind = await studyCommand(file, { only: ['a', 'c'] }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(kind).to.match(/^study: condition 'c': .*judges\.0\.options\.rol: unrecognized key/s);
    expect(existsSync(join(root, 'y', 'a-s1'))).to.equal(false);
  });

  it('writes figures to three decimals, or three significant figures below 0.1', () => {
    expect([0.44296, 0.035564, 0, 4.7472, -0.0012345, NaN].map(f3)).to.deep.equal([
      '0.443',
      '0.0356',
      '0.000',
      '4.747',
      '-0.00123',
      '',
    ]);
  });
});
