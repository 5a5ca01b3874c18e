import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionJudge } from '../../judges/index.js';
import { makeJudge } from '../../src/registry.js';
import { combineRewards } from '../../src/core/combine.js';
import { episode, solverGroup } from './fixtures.js';
import { runExperiment } from '../../src/engine/experiment.js';
import { tinyConfig } from '../engine/fixtures.js';
import { existsSync } from 'node:fs';

const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: Error) => e.message,
  );

describe('judges/function', () => {
  let dir: string;
  const mod = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-reward-fn-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("calls a module's plain function once per batch with the prompts, completions and each row's fields", async () => {
    const path = mod(
      'rewards.mjs',
      `export const calls = [];
       export function brevity(prompts, completions, fields) {
         calls.push({ prompts, completions, fields });
         return completions.map((c) => (c.length <= 2 ? 1 : c === 'skip' ? null : 0));
       }
       export const helper = 3;`,
    );
    const judge = makeJudge('function', { module: path, export: 'brevity' });
    expect(judge.name).to.equal('brevity');
    const task = { id: 't1', family: 'countdown', prompt: 'make 22', answer: '22', fields: { nums: [3, 5, 7] } };
    const batch = [
      episode([{ text: '12' }, { text: 'long answer', role: 'proposer' }], task),
      ...solverGroup([{ text: 'abc' }, { text: 'skip' }]),
    ];
    expect(await judge.score(batch)).to.deep.equal([[1, null], [0], [null]]);
    const { calls } = (await import(path)) as {
      calls: { prompts: string[]; completions: string[]; fields: unknown[] }[];
    };
    expect(calls).to.have.length(1);
    expect(calls[0].completions).to.deep.equal(['12', 'abc', 'skip']);
    expect(calls[0].prompts[0]).to.equal('make 22');
    expect(calls[0].fields[0]).to.deep.equal({ nums: [3, 5, 7], id: 't1', answer: '22' });
  });

  it('takes an async default export, and its rewards weigh in beside another judge', async () => {
    const path = mod('async.mjs', 'export default async (p, completions) => completions.map(() => 0.5);');
    const judge = new FunctionJudge({ module: path });
    const rewards = await judge.score(solverGroup([{ text: 'a' }, { text: 'b' }]));
    expect(rewards).to.deep.equal([[0.5], [0.5]]);
    expect(combineRewards([rewards, [[1], [0]]], [0.2, 1])).to.deep.equal([[1.1], [0.1]]);
  });

  it('names the module, the function and the row when the function misbehaves', async () => {
    const batch = solverGroup([{ text: 'a' }, { text: 'b' }]);
    const cases: [string, RegExp][] = [
      [
        "export function r() { throw new Error('no luck'); }",
        /judge 'r' \(.*bad-0\.mjs#r\): threw on a batch of 2 rows: no luck/,
      ],
      ['export function r() { return [1]; }', /#r\): returned 1 rewards for 2 rows/],
      [
        'export function r() { return [1, NaN]; }',
        /#r\): row 1 \(episode ep1, turn 0\): reward must be a finite number or null, got NaN/,
      ],
      ["export function r() { return [1, '1']; }", /row 1 .*got 1/],
      ['export function r() { return 1; }', /must return an array of 2 rewards, got number/],
    ];
    for (const [i, [text, msg]] of cases.entries()) {
      const judge = new FunctionJudge({ module: mod(`bad-${i}.mjs`, text), export: 'r' });
      expect(await failure(Promise.resolve(judge.score(batch)))).to.match(msg);
    }
  });

  it('stops at its checks when the module or the function is missing', async () => {
    expect(await failure(new FunctionJudge({ module: join(dir, 'nope.mjs') }).ready())).to.match(
      /judge 'function' \(.*nope\.mjs\): cannot load: no such file/,
    );
    const two = mod('two.mjs', 'export const a = () => []; export const b = () => [];');
    expect(await failure(new FunctionJudge({ module: two }).ready())).to.match(
      /say which function with option 'export'; it exports a, b/,
    );
    expect(await failure(new FunctionJudge({ module: two, export: 'c' }).ready())).to.match(
      /'c' is not a function; functions: a, b/,
    );
    expect(() => makeJudge('function', {})).to.throw(/module/);
  });

  it('a config names it with a weight beside the verifier, and a missing module stops the run before any work', async function () {
    this.timeout(60000);
    const path = mod('quarter.mjs', 'export const quarter = (p, completions) => completions.map(() => 0.25);');
    const judges = [
      { kind: 'verifier', weight: 0 },
      { kind: 'function', weight: 2, options: { module: path } },
    ];
    const ok = await runExperiment(
      { ...tinyConfig(dir), iterations: 1, workers: 1, judges },
      { out: join(dir, 'ok'), log: () => {} },
    );
    // 0 x the verifier's reward + 2 x 0.25 for every turn
    expect(ok.metrics.find((r) => r.iteration === 1)?.['reward/solver']).to.equal(0.5);
    const missing = [{ kind: 'function', options: { module: join(dir, 'gone.mjs') } }];
    const out = join(dir, 'missing');
    const error = await runExperiment({ ...tinyConfig(dir), workers: 1, judges: missing }, { out, log: () => {} }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(error).to.match(/gone\.mjs\): cannot load/);
    expect(existsSync(out)).to.equal(false);
  });
});
