import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { checkCommand } from '../../src/cli/check.js';
import { tinyConfig, tinyPretrainInput } from '../engine/fixtures.js';

const execFileP = promisify(execFile);

/** `coevolve ARGS` from the sources (tsx), as a user runs it: its exit code and output. */
async function coevolve(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP(
      process.execPath,
      ['--import', 'tsx', '--conditions', 'coevolve-source', join('src', 'cli', 'main.ts'), ...args],
      { encoding: 'utf8' },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('coevolve run CONFIG --check', function () {
  this.timeout(60000);

  it('plans a shipped config: its kinds and options, its bases and their makers, preflight', async () => {
    const plan = await checkCommand('configs/default.yaml', { set: [] });
    expect(plan).to.match(/^configs\/default\.yaml: valid; nothing was run, made or written/);
    expect(plan).to.include('arena       propose-solve, groups of 32, { attempts: 8,');
    expect(plan).to.include('learnability, weight 1, { role: proposer }');
    expect(plan).to.include(
      'checkpoints/base-selfplay-add2: present; made by coevolve pretrain configs/pretrain/base-selfplay-add2.yaml',
    );
    expect(plan).to.match(/preflight {3}passed: .* 3 evaluators/);
  });

  it('names the pretrain configs that make missing bases, in the order a run would, and makes none', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-check-'));
    const configs = join(root, 'configs');
    mkdirSync(configs);
    const solver = join(root, 'solver');
    const judge = join(root, 'judge');
    writeFileSync(join(configs, 'solver.yaml'), stringify(tinyPretrainInput(solver)));
    writeFileSync(join(configs, 'judge.yaml'), stringify({ ...tinyPretrainInput(judge), init: solver }));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(tinyConfig(join(root, 'runs'), { models: { main: { checkpoint: judge } } })));
    const plan = await checkCommand(path, { set: [] }, configs);
    expect(plan).to.include(`${judge}: missing; made by coevolve pretrain ${join(configs, 'judge.yaml')}`);
    expect(plan).to.include(
      `a run makes them first: coevolve pretrain ${join(configs, 'solver.yaml')}, then coevolve pretrain ${join(configs, 'judge.yaml')}`,
    );
    expect(plan).to.match(/preflight {3}once the bases are made/);
    expect(readdirSync(root).sort()).to.deep.equal(['c.yaml', 'configs']);
    // a missing base that nothing makes is an error naming the field, as a run's preflight would
    await checkCommand(path, { set: [`models.main.checkpoint=${join(root, 'nowhere')}`] }, configs).then(
      () => expect.fail('expected --check to refuse a base nothing makes'),
      (e: Error) =>
        expect(e.message).to.match(/^models\.main\.checkpoint: .*nowhere does not exist; no pretrain config/),
    );
  });

  it('exits 0 with the plan on stdout, and 1 naming the field of a bad option; neither makes a run directory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-check-'));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(tinyConfig(join(root, 'runs'))));
    const good = await coevolve(['run', path, '--check', '--set', 'iterations=7']);
    expect(good.code, good.stderr).to.equal(0);
    expect(good.stdout).to.include('tiny: 7 iterations');
    expect(good.stdout).to.include(`run dir     ${join(root, 'runs', 'tiny')}`);
    const bad = await coevolve(['run', path, '--check', '--set', 'judges.0.options.rol=solver']);
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.equal('');
    expect(bad.stderr).to.match(/judges\.0\.options\.rol: unrecognized key \(did you mean "role"\?\)/);
    expect(existsSync(join(root, 'runs'))).to.equal(false);
    expect(readdirSync(root)).to.deep.equal(['c.yaml']);
  });
});
