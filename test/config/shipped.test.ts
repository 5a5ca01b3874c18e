import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { baseMakers } from '../../src/pretrain/bases.js';
import { PretrainSchema } from '../../src/pretrain/index.js';
import { checkStudy } from '../../src/study/run.js';
import { loadStudy } from '../../src/study/schema.js';

/** Every YAML file under `dir`, recursively. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(f) ? [p] : [];
  });
}

/** Every string in `value` that names a shipped path (checkpoints/..., configs/...), with where it sits. */
function namedPaths(value: unknown, at = ''): Array<{ at: string; path: string }> {
  if (typeof value === 'string') return /^(checkpoints|configs)\//.test(value) ? [{ at, path: value }] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => namedPaths(v, `${at}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => namedPaths(v, at ? `${at}.${k}` : k));
  return [];
}

const isPretrain = (raw: Record<string, unknown>) => 'corpus' in raw && 'out' in raw && !('roles' in raw);
const isStudy = (raw: Record<string, unknown>) => 'conditions' in raw && !('roles' in raw);

/** The files git tracks under `dir`: what a fresh clone has. */
function committed(dir: string): Set<string> {
  return new Set(execFileSync('git', ['ls-files', '-z', dir], { encoding: 'utf8' }).split('\0').filter(Boolean));
}

// A config shipped in configs/ runs on a fresh clone: every checkpoint or file it names is
// committed, or is in a checkpoint that a shipped pretrain config makes (a run makes it first),
// and then the config's header names that command (`coevolve pretrain <file>`). A committed
// checkpoint that no pretrain config makes is a run's result: the header names it, saying which
// run made it. So a base removed from git cannot become one that nothing makes.
describe('the shipped configs', () => {
  const files = yamlFiles('configs');
  const raws = new Map(files.map((f) => [f, parse(readFileSync(f, 'utf8')) as Record<string, unknown>]));
  const makers = baseMakers('configs'); // absolute checkpoint folder -> the pretrain config that makes it

  it('are many, of both kinds, and each parses against its schema', () => {
    expect(files.length).to.be.above(40);
    expect(makers.size).to.be.above(5);
    for (const [f, raw] of raws) {
      if (isPretrain(raw)) expect(PretrainSchema.safeParse(raw).success, f).to.equal(true);
      else if (isStudy(raw)) expect(() => checkStudy(loadStudy(f)), f).to.not.throw();
      else expect(() => loadConfig(f), f).to.not.throw();
    }
  });

  it('sit by purpose: run configs in runs/ (and default.yaml), pretrain configs in pretrain/ named after the base they make, studies in studies/ named after their runs folder', () => {
    const problems: string[] = [];
    for (const [f, raw] of raws) {
      const [, folder] = f.split(sep);
      const stem = basename(f).replace(/\.ya?ml$/, '');
      if (isPretrain(raw)) {
        if (folder !== 'pretrain') problems.push(`${f}: a pretrain config outside configs/pretrain/`);
        if (stem !== basename(String(raw.out))) problems.push(`${f}: makes ${String(raw.out)}; name it after it`);
      } else if (isStudy(raw)) {
        if (folder !== 'studies') problems.push(`${f}: a study outside configs/studies/`);
        if (stem !== raw.name) problems.push(`${f}: its runs go to <outDir>/${String(raw.name)}; name it after them`);
      } else if (folder !== 'runs' && f !== join('configs', 'default.yaml'))
        problems.push(`${f}: a run config outside configs/runs/`);
    }
    expect(problems).to.deep.equal([]);
  });

  it('name only committed paths, or checkpoints a shipped pretrain config makes, each said in the header', () => {
    const tracked = new Set([...committed('checkpoints'), ...committed('configs')]);
    const folders = new Set([...tracked].map((p) => p.match(/^checkpoints\/[^/]+/)?.[0]).filter(Boolean));
    const problems: string[] = [];
    for (const [f, raw] of raws) {
      const header = readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('#'))
        .join('\n');
      for (const { at, path } of namedPaths(raw)) {
        if (isPretrain(raw) && at === 'out') continue;
        const folder = path.match(/^checkpoints\/[^/]+/)?.[0];
        const maker = folder && makers.get(resolve(folder));
        if (tracked.has(path) || (folder === path && folders.has(folder))) {
          if (folder && !maker && !header.includes(folder))
            problems.push(
              `${f}: ${at}: ${path} is a run's result (no pretrain config makes it); the header does not say which run`,
            );
          continue;
        }
        if (!maker) problems.push(`${f}: ${at}: ${path} is not committed, and no shipped pretrain config makes it`);
        else if (!header.includes(`coevolve pretrain ${maker}`))
          problems.push(
            `${f}: ${at}: ${path} is made by ${maker}, but the header does not say \`coevolve pretrain ${maker}\``,
          );
      }
    }
    expect(problems).to.deep.equal([]);
  });
});
