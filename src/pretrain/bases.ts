/**
 * Bases made on first use. A shipped experiment names the bases it starts from (a TinyLM
 * checkpoint, a Hugging Face directory); a base that no one committed (a Hugging Face base is
 * tens of MB) is made by the pretrain config whose `out` it is. Before a run starts, each
 * missing base that such a config makes is made, saying so; one that none makes is left to
 * preflight, which names it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import type { ExperimentConfig } from '../config/schema.js';

/** The pretrain configs under `root` (YAML with `corpus` and `out`, no `roles`), by the absolute folder each makes. */
export function baseMakers(root = 'configs'): Map<string, string> {
  const makers = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(name)) {
        let raw: unknown;
        try {
          raw = parse(readFileSync(path, 'utf8'));
        } catch {
          continue; // not this function's to judge: run and preflight read the files they are given
        }
        if (raw && typeof raw === 'object' && 'corpus' in raw && 'out' in raw && !('roles' in raw))
          makers.set(resolve(String((raw as { out: unknown }).out)), path);
      }
    }
  };
  if (existsSync(root)) walk(root);
  return makers;
}

/** Every string in a config, wherever it sits (paths among them). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

/**
 * The base folders `c` needs: the model folders it starts from (Hugging Face directories and
 * TinyLM checkpoints), and the folder a maker makes of any other path it names inside one (a
 * held-out set a base carries, read by an evaluator).
 */
function baseFolders(c: ExperimentConfig, makers: Map<string, string>): string[] {
  const models = Object.values(c.models)
    .flatMap((m) => [m.kind === 'hf' ? m.path : undefined, m.checkpoint])
    .filter((p): p is string => p !== undefined);
  const inside = strings(c).flatMap((s) => {
    const at = resolve(s);
    return [...makers.keys()].filter((f) => at.startsWith(f + sep)).map((f) => relative(process.cwd(), f));
  });
  return [...new Set([...models, ...inside])];
}

/** One base a config needs: its folder, whether it is there, and the pretrain config under `root` that makes it, if one does. */
export interface NeededBase {
  folder: string;
  present: boolean;
  maker?: string;
}

/** The bases `c` needs (what {@link makeMissingBases} would look for), each present or not, with its maker. */
export function neededBases(c: ExperimentConfig, root = 'configs'): NeededBase[] {
  const makers = baseMakers(root);
  return baseFolders(c, makers).map((folder) => ({
    folder,
    present: existsSync(folder),
    maker: makers.get(resolve(folder)),
  }));
}

/** The `init:` a pretrain config starts from, if any: a base that must be there before it runs. */
function initOf(pretrainConfig: string): string | undefined {
  try {
    const raw = parse(readFileSync(pretrainConfig, 'utf8')) as { init?: unknown };
    return typeof raw?.init === 'string' ? raw.init : undefined;
  } catch {
    return undefined; // pretrain reports the file's own errors when it runs
  }
}

/** How a missing checkpoint folder is made, for an error that names it. */
export function howToMake(folder: string, root = 'configs'): string {
  const maker = baseMakers(root).get(resolve(folder));
  return maker
    ? `make it with: coevolve pretrain ${maker}`
    : `no pretrain config under ${root}/ makes it: it is a run's result, and the header of the config that names it says which run`;
}

/**
 * Makes each missing base of `c` that a pretrain config under `root` makes (`make` runs one
 * config), the base a maker starts from (`init:`) first when it is missing too; returns the
 * configs run, in the order run.
 */
export async function makeMissingBases(
  c: ExperimentConfig,
  make: (pretrainConfig: string) => Promise<void>,
  log: (line: string) => void,
  root = 'configs',
): Promise<string[]> {
  const makers = baseMakers(root);
  const missing = baseFolders(c, makers).filter((p) => !existsSync(p));
  const run: string[] = [];
  const makeFolder = async (folder: string, chain: string[]): Promise<void> => {
    const maker = makers.get(resolve(folder));
    if (!maker || run.includes(maker) || chain.includes(maker)) return;
    const init = initOf(maker);
    if (init !== undefined && !existsSync(init)) await makeFolder(init, [...chain, maker]);
    log(`${folder} is missing: making it first with coevolve pretrain ${maker}`);
    await make(maker);
    run.push(maker);
  };
  for (const folder of missing) await makeFolder(folder, []);
  return run;
}
