import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { runExperiment } from '../../src/engine/experiment.js';
import { chartGroups, writeReport, type WrittenReport } from '../../src/report/index.js';
import { launchBrowser } from '../browser.js';
import { tinyConfig } from '../engine/fixtures.js';
import { need } from '../needs.js';

describe('coevolve report', function () {
  this.timeout(120000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-report-'));
  let written: WrittenReport;
  let browser: Browser | undefined;

  before(async () => {
    for (const seed of [3, 4])
      await runExperiment({ ...tinyConfig(root), seed, workers: 1 }, { out: join(root, `run-${seed}`), log: () => {} });
    written = await writeReport([join(root, 'run-3'), join(root, 'run-4')], join(root, 'report'), {
      stream: { write: () => true },
    });
    browser = await launchBrowser();
  });
  after(async () => browser?.close());

  it('groups metrics into charts: rewards, accuracy, losses, throughput, and one per evaluator or arena prefix', () => {
    const groups = chartGroups([
      {
        iteration: 1,
        'reward/solver': 1,
        'reward/judge': 0,
        'eval/pass1': 0.5,
        'eval/heldout/accuracy': 0.4,
        'losses/main/loss': 0.1,
        'losses/main/skipped': 0,
        'judge/f1': 0.3,
        'time/rollout_tokens_per_s': 9,
        samples: 3,
        phase: 0,
      },
    ]);
    expect(groups.map((g) => [g.id, g.keys])).to.deep.equal([
      ['rewards', ['reward/judge', 'reward/solver']],
      ['accuracy', ['eval/pass1']],
      ['loss', ['losses/main/loss']],
      ['throughput', ['time/rollout_tokens_per_s']],
      ['eval-heldout', ['eval/heldout/accuracy']],
      ['judge', ['judge/f1']],
    ]);
  });

  it('writes a chart per group, each SVG with its lines drawn and both runs overlaid', () => {
    const ids = written.charts.map((c) => c.id);
    expect(ids).to.include.members(['rewards', 'accuracy', 'loss', 'throughput']);
    for (const c of written.charts) {
      const svg = readFileSync(c.svg, 'utf8');
      const lines = [...svg.matchAll(/<g class="mark-line role-mark[^"]*"[^>]*>(.*?)<\/g>/gs)].flatMap((m) => [
        ...m[1].matchAll(/ d="M[^"]+"/g),
      ]);
      expect(lines.length, c.id).to.be.above(0);
      expect(svg, c.id).to.contain('run-3: ').and.to.contain('run-4: ');
      expect(readFileSync(c.png).subarray(1, 4).toString(), c.id).to.equal('PNG');
    }
  });

  it('the HTML report shows every chart drawn in a browser, and every PNG is not blank', async function () {
    if (!browser) need(this, 'browser');
    const page = await browser!.newPage();
    await page.goto(pathToFileURL(written.html).href);
    const drawn = await page.$$eval('figure.chart', (figs) =>
      figs.map((f) => ({
        id: f.id,
        // marks with a real extent on screen: a line's path or an evaluation's points
        marks: [...f.querySelectorAll('g.mark-line path, g.mark-symbol path')].filter((p) => {
          const b = (p as SVGGraphicsElement).getBBox();
          return b.width > 0 || b.height > 0;
        }).length,
      })),
    );
    expect(drawn.map((d) => d.id)).to.deep.equal(written.charts.map((c) => c.id));
    for (const d of drawn) expect(d.marks, d.id).to.be.above(0);
    for (const c of written.charts) {
      // the PNG decoded by the browser: a share of its pixels is not the white background
      const inked = await page.evaluate(
        async (src) => {
          const img = new Image();
          img.src = src;
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = img.width;
          canvas.height = img.height;
          const ctx = canvas.getContext('2d')!;
          ctx.drawImage(img, 0, 0);
          const px = ctx.getImageData(0, 0, img.width, img.height).data;
          let ink = 0;
          for (let i = 0; i < px.length; i += 4) if (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200) ink++;
          return ink / (px.length / 4);
        },
        `data:image/png;base64,${readFileSync(c.png).toString('base64')}`,
      ); // a data URL: file:// images taint the canvas
      expect(inked, c.id).to.be.above(0.005);
    }
    await page.close();
  });
});
