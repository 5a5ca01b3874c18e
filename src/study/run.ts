import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadConfig } from '../config/load.js';
import { makeMissingBases } from '../pretrain/bases.js';
import { createContainer, Resolver } from '../registry.js';
import type { Study } from './schema.js';

/** One run of a study: a condition at a seed, in its own directory. */
export interface StudyRun {
  condition: string;
  seed: number;
  dir: string;
}

/** The study's runs, seed by seed, so a batch cut short still has every condition at its first seeds. */
export function studyRuns(s: Study, only?: readonly string[]): StudyRun[] {
  const names = only ?? Object.keys(s.conditions);
  for (const n of names)
    if (!s.conditions[n])
      throw new Error(`study: unknown condition '${n}'; known: ${Object.keys(s.conditions).join(', ')}`);
  return s.seeds.flatMap((seed) =>
    names.map((condition) => ({ condition, seed, dir: join(s.outDir, s.name, `${condition}-s${seed}`) })),
  );
}

/**
 * Every condition's config with its overrides, checked as `coevolve run` would, so a mistake in
 * the last condition is refused before the first run starts rather than an hour into the study.
 */
export function checkStudy(s: Study, only?: readonly string[]): void {
  for (const name of only ?? Object.keys(s.conditions)) {
    const c = s.conditions[name];
    try {
      createContainer()
        .get(Resolver)
        .plan(loadConfig(c.config, [...c.set, `seed=${s.seeds[0]}`])); // kinds and their options too
    } catch (e) {
      throw new Error(`study: condition '${name}': ${(e as Error).message}`, { cause: e });
    }
  }
}

/** 'done', 'running' or 'failed' as the run's record says, or undefined when it never started. */
export function runStatus(dir: string): string | undefined {
  const f = join(dir, 'run.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { status: string }).status : undefined;
}

/**
 * Plays the study: a base a condition names that is missing is made first, once, by its pretrain
 * config (log beside the runs); then each run not done yet is started (`coevolve run CONFIG --set ... --set
 * seed=N --set name=COND-sN --out DIR`) or, when it was killed, resumed; `parallel` at a time, each in its own
 * process with its log beside its directory. A failed run is reported and the others go on.
 */
export async function playStudy(
  s: Study,
  o: { only?: string[]; bin: string; log?: (line: string) => void; configs?: string },
): Promise<Error[]> {
  const log = o.log ?? ((l: string) => console.error(l));
  const queue = studyRuns(s, o.only).filter((r) => runStatus(r.dir) !== 'done'); // unknown names refused here
  checkStudy(s, o.only);
  const failures: Error[] = [];
  const folder = join(s.outDir, s.name);
  mkdirSync(folder, { recursive: true });
  // missing bases first, one at a time: runs started side by side would each make it, into the same folder
  for (const name of new Set(queue.map((r) => r.condition))) {
    const c = s.conditions[name];
    const make = async (file: string) => {
      const stem = basename(file).replace(/\.ya?ml$/, '');
      const logFile = join(folder, `${stem.startsWith('pretrain') ? '' : 'pretrain-'}${stem}.log`);
      // a base can take an hour: its progress lines show in the study's log as they come
      if ((await runCoevolve(o.bin, ['pretrain', file], logFile, (l) => log(`  ${stem}: ${l}`))) !== 0)
        throw new Error(`study: coevolve pretrain ${file} failed; see ${logFile}`);
    };
    await makeMissingBases(loadConfig(c.config, c.set), make, log, o.configs);
  }
  await Promise.all(
    Array.from({ length: s.parallel }, async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        const t0 = Date.now();
        await play(s, r, o.bin).catch((e: Error) => failures.push(e));
        log(
          `${r.condition} seed ${r.seed}: ${runStatus(r.dir) ?? 'not started'} (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
        );
      }
    }),
  );
  return failures;
}

async function play(s: Study, r: StudyRun, bin: string): Promise<void> {
  const c = s.conditions[r.condition];
  // the name labels the run's progress lines and report with its condition and seed
  const sets = [...c.set, `seed=${r.seed}`, `name=${r.condition}-s${r.seed}`].flatMap((x) => ['--set', x]);
  const args = runStatus(r.dir) ? ['run', '--resume', r.dir] : ['run', c.config, ...sets, '--out', r.dir];
  const logFile = `${r.dir}.log`;
  const code = await runCoevolve(bin, args, logFile);
  if (code !== 0) throw new Error(`${r.condition} seed ${r.seed} exited ${code}; see ${logFile}`);
}

/** Runs `coevolve ARGS` in its own process, its stderr written to `logFile` as it comes (and each line to `echo`); resolves to its exit code. */
function runCoevolve(
  bin: string,
  args: string[],
  logFile: string,
  echo?: (line: string) => void,
): Promise<number | null> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    writeFileSync(logFile, '');
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      appendFileSync(logFile, d);
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const l of lines) echo?.(l);
    });
    child.on('exit', (code) => {
      if (partial) echo?.(partial);
      done(code);
    });
  });
}
