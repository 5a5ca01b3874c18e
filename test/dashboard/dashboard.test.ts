import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { stringify } from 'yaml';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { launchBrowser } from '../browser.js';
import { tinyConfig } from '../engine/fixtures.js';
import { need } from '../needs.js';

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else out[p] = `${s.size}:${s.mtimeMs}`;
    }
  };
  walk(dir);
  return out;
}

describe('coevolve dashboard', function () {
  this.timeout(180000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-dash-'));
  let dash: RunningDashboard;
  let browser: Browser | undefined;

  before(async () => {
    dash = await startDashboard({ root, port: 0, pollMs: 100 });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  it('shows a chart updating while a run progresses, then opens an episode from the browser, and writes nothing', async function () {
    if (!browser) need(this, 'browser');
    // a run slow enough to watch: 150 iterations of 16 tasks x 8 answers on a small fresh model (with 40 it
    // timed out twice in CI-like runs: most likely the run ended before the first chart was drawn)
    const config = join(root, 'live.yaml');
    writeFileSync(
      config,
      stringify({
        ...tinyConfig(root),
        name: 'live',
        iterations: 150,
        workers: 1,
        checkpointEvery: 10,
        tasks: { ...tinyConfig(root).tasks, perIteration: 16, train: { source: 'generate', count: 400 } },
        arena: { groupSize: 8, maxNewTokens: 3 },
        models: { main: { config: { dModel: 64, nHeads: 2, nLayers: 2, context: 24 } } },
      }),
    );
    const run = spawn(process.execPath, ['bin/coevolve.js', 'run', config, '--out', join(root, 'live')], {
      stdio: 'ignore',
    });
    const ended = new Promise((resolve) => run.once('exit', resolve));
    try {
      const metrics = join(root, 'live', 'metrics.jsonl');
      for (let i = 0; i < 600 && !(existsSync(metrics) && statSync(metrics).size > 0); i++)
        await new Promise((r) => setTimeout(r, 50));
      const page = await browser!.newPage();
      await page.goto(`${dash.url}?run=live`);
      const rewards = '#chart-rewards g.mark-line path';
      await page.waitForSelector(rewards);
      const first = await page.$eval(rewards, (p) => p.getAttribute('d'));
      // the same chart redrawn from the run's new metrics: its line grows
      await page.waitForFunction(
        ([sel, d]) => {
          const p = document.querySelector(sel as string);
          return p !== null && p.getAttribute('d') !== d;
        },
        [rewards, first],
        { timeout: 60000 },
      );
      const later = await page.$eval(rewards, (p) => p.getAttribute('d'));
      const points = (d: string) => (d.match(/[ML]/g) ?? []).length; // one command per iteration drawn
      expect(points(later!)).to.be.above(points(first!));
      expect(await page.$eval('tr.run.selected', (tr) => tr.textContent)).to.match(/live(running|done)/);
      await ended;
      // the episode browser: an iteration's episodes, then one episode's turns
      await page.fill('#iteration', '3');
      await page.dispatchEvent('#iteration', 'change');
      await page.waitForSelector('#episodes li');
      expect(await page.$$eval('#episodes li', (lis) => lis.length)).to.equal(16 * 8);
      const before = snapshot(join(root, 'live'));
      await page.click('#episodes li');
      await page.waitForSelector('tr.turn');
      const turn = await page.$$eval('tr.turn td', (tds) => tds.map((td) => td.textContent));
      expect(turn[1]).to.equal('solver');
      expect(turn[2]).to.match(/^\d\+\d=$/); // the prompt the solver saw
      expect(Number(turn[5])).to.be.a('number').and.not.NaN; // its reward
      expect(snapshot(join(root, 'live'))).to.deep.equal(before); // the dashboard only read
      await page.close();
    } finally {
      run.kill('SIGKILL');
    }
  });

  it('with an API key, refuses requests without it', async () => {
    const locked = await startDashboard({ root, port: 0, apiKey: 'k3y' });
    try {
      expect((await fetch(`${locked.url}api/runs`)).status).to.equal(401);
      expect((await fetch(`${locked.url}api/runs?key=nope`)).status).to.equal(401);
      const ok = await fetch(`${locked.url}api/runs?key=k3y`);
      expect(ok.status).to.equal(200);
      expect(Array.isArray(await ok.json())).to.equal(true);
      expect((await fetch(`${locked.url}api/runs/..%2F..%2Fetc/charts?key=k3y`)).status).to.equal(404);
    } finally {
      await locked.close();
    }
  });
});
