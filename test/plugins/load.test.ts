import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runExperiment } from '../../src/engine/experiment.js';
import { loadPlugins } from '../../src/plugins/load.js';
import { resolveTaskFamily } from '../../src/registry.js';
import { Rng } from '../../src/util/rng.js';
import { tinyConfig } from '../engine/fixtures.js';

const api = pathToFileURL(resolve('src/api/index.ts')).href;

/** Writes a plugin module into `dir` and returns its absolute path. */
function plugin(dir: string, file: string, body: string): string {
  const path = join(dir, file);
  writeFileSync(path, `import { defineArena, defineEvaluator, defineJudge } from '${api}';\n${body}\n`);
  return path;
}

/** Runs a tiny experiment with `plugins` and judges; returns the error and whether the run folder was made. */
async function attempt(
  root: string,
  plugins: string[],
  over: Record<string, unknown> = {},
): Promise<{ error: Error | null; made: boolean }> {
  const out = join(root, 'run');
  const error = await runExperiment({ ...tinyConfig(root), plugins, workers: 1, ...over }, { out, log: () => {} }).then(
    () => null,
    (e: Error) => e,
  );
  return { error, made: existsSync(out) };
}

describe('plugins named in config', function () {
  this.timeout(60000);
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'coevolve-plugins-'));
  });

  it('a plugin judge runs in an experiment, and an unknown name lists it among the known', async () => {
    const p = plugin(root, 'judge.ts', "export const half = defineJudge('half', { reward: () => 0.5 });");
    const ok = await runExperiment(
      { ...tinyConfig(root), iterations: 1, workers: 1, plugins: [p], judges: [{ kind: 'half' }] },
      { out: join(root, 'ok'), log: () => {} },
    );
    expect(ok.metrics.find((r) => r.iteration === 1)?.['reward/solver']).to.equal(0.5);
    const { error, made } = await attempt(root, [p], { judges: [{ kind: 'halve' }] });
    expect(error?.message).to.match(/judges\.0\.kind: unknown judge 'halve'; known: .*\bhalf\b.*verifier/);
    expect(made).to.equal(false);
  });

  it('a missing module stops before any work, naming the plugin', async () => {
    const { error, made } = await attempt(root, ['./no/such-plugin.ts']);
    expect(error?.message).to.match(/^plugin \.\/no\/such-plugin\.ts: cannot load: no such file .*such-plugin\.ts/);
    expect(made).to.equal(false);
    const pkg = await attempt(root, ['no-such-coevolve-plugin']);
    expect(pkg.error?.message).to.match(/^plugin no-such-coevolve-plugin: cannot load: .*no-such-coevolve-plugin/);
  });

  it('a module that throws while loading stops before any work, naming the plugin', async () => {
    const p = plugin(root, 'throws.ts', "throw new Error('plugin exploded');");
    const { error, made } = await attempt(root, [p]);
    expect(error?.message).to.equal(`plugin ${p}: cannot load: plugin exploded`);
    expect(made).to.equal(false);
  });

  it('a name already taken, built in or by another plugin, stops before any work naming the plugin', async () => {
    const builtIn = plugin(root, 'taken.ts', "export const v = defineJudge('verifier', { reward: () => 1 });");
    const a = await attempt(root, [builtIn]);
    expect(a.error?.message).to.equal(`plugin ${builtIn}: judge 'verifier' is already taken (a built-in kind)`);
    expect(a.made).to.equal(false);
    const first = plugin(root, 'first.ts', "export const j = defineJudge('mine', { reward: () => 1 });");
    const second = plugin(root, 'second.ts', "export const j = defineJudge('mine', { reward: () => 0 });");
    const b = await attempt(root, [first, second]);
    expect(b.error?.message).to.equal(`plugin ${second}: judge 'mine' is already taken (by plugin ${first})`);
    const evaluator = plugin(
      root,
      'eval.ts',
      "export const e = defineEvaluator('accuracy', () => { throw new Error('never built'); });",
    );
    const c = await attempt(root, [evaluator]);
    expect(c.error?.message).to.equal(`plugin ${evaluator}: evaluator 'accuracy' is already taken (a built-in kind)`);
    expect(c.made).to.equal(false);
  });

  it('a module that exports nothing usable stops before any work, naming the plugin and what it exports', async () => {
    const p = plugin(root, 'empty.ts', 'export const helper = () => 1;\nexport default { judge: "no" };');
    const { error, made } = await attempt(root, [p]);
    expect(error?.message).to.match(
      new RegExp(
        `^plugin ${p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: exports nothing coevolve can use \\(exports: default, helper\\); export what defineArena`,
      ),
    );
    expect(made).to.equal(false);
  });

  it('commands that need only a task family resolve one from plugins (pretrain, eval, tasks)', async () => {
    const family = await resolveTaskFamily('compare', ['./examples/task-family/compare.ts']);
    expect(family.verify(family.generate(new Rng(1), family.validate({}), 0), '<')).to.be.a('boolean');
    const err = await resolveTaskFamily('compare', [], '--family').then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal(
      "--family: unknown task family 'compare'; known: arithmetic, countdown, dialogue, math, strings, word-problems",
    );
  });

  it('finds a package by name under the working directory, and takes lists and default exports', async () => {
    const dir = join(root, 'node_modules', 'my-coevolve-plugin');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'my-coevolve-plugin', type: 'module', exports: { '.': { import: './main.js' } } }),
    );
    writeFileSync(
      join(dir, 'main.js'),
      `import { defineJudge } from '${api}';\nexport default [defineJudge('one', { reward: () => 1 }), defineJudge('two', { reward: () => 2 })];\n`,
    );
    const defs = await loadPlugins(['my-coevolve-plugin'], root);
    expect(defs.map((d) => [d.concept, d.name, d.source])).to.deep.equal([
      ['judge', 'one', 'plugin my-coevolve-plugin'],
      ['judge', 'two', 'plugin my-coevolve-plugin'],
    ]);
  });
});
