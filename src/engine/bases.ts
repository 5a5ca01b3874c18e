/**
 * Bases made on first use. A shipped experiment names the bases it starts from (a TinyLM
 * checkpoint, a Hugging Face directory); a base that no one committed (a Hugging Face base is
 * tens of MB) is made by the pretrain config whose `out` it is. Before a run starts, each
 * missing base that such a config makes is made, saying so; one that none makes is left to
 * preflight, which names it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

/** The model folders `c` starts from: Hugging Face directories and TinyLM checkpoints. */
function baseFolders(c: ExperimentConfig): string[] {
  return [
    ...new Set(
      Object.values(c.models)
        .flatMap((m) => [m.kind === 'hf' ? m.path : undefined, m.checkpoint])
        .filter((p): p is string => p !== undefined),
    ),
  ];
}

/** Makes each missing base of `c` that a pretrain config under `root` makes (`make` runs one config); returns the configs run. */
export async function makeMissingBases(
  c: ExperimentConfig,
  make: (pretrainConfig: string) => Promise<void>,
  log: (line: string) => void,
  root = 'configs',
): Promise<string[]> {
  const missing = baseFolders(c).filter((p) => !existsSync(p));
  if (!missing.length) return [];
  const makers = baseMakers(root);
  const run: string[] = [];
  for (const folder of missing) {
    const maker = makers.get(resolve(folder));
    if (!maker || run.includes(maker)) continue;
    log(`${folder} is missing: making it first with coevolve pretrain ${maker}`);
    await make(maker);
    run.push(maker);
  }
  return run;
}
