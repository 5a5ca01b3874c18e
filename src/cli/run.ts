import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import { runLoop } from '../engine/loop.js';
import { preflight, type Checked } from '../engine/preflight.js';
import { createContainer, Resolver } from '../engine/registry.js';
import { RunStore } from '../store/run.js';

export interface RunOptions { set: string[]; resume?: string; out?: string; freshOptimizer?: boolean }

/**
 * `coevolve run CONFIG [--set k=v ...] [--out DIR]` starts a run; `coevolve run --resume DIR`
 * continues one. A new run's config, names, paths, checkpoints and task files are all
 * checked before the run folder is made; either way the run's lock is held while it runs,
 * so a second writer is refused.
 */
export async function runCommand(configPath: string | undefined, o: RunOptions): Promise<void> {
  const log = (l: string) => console.error(l);
  let store: RunStore;
  let checked: Checked | undefined;
  if (o.resume) {
    if (configPath || o.set.length) throw new Error('run --resume DIR takes the config stored in DIR; give no CONFIG or --set');
    store = await RunStore.open(o.resume, { write: true, log });
  } else {
    if (o.freshOptimizer) throw new Error('run: --fresh-optimizer applies to --resume only');
    if (!configPath) throw new Error('run: give a CONFIG file, or --resume DIR');
    const config = loadConfig(configPath, o.set);
    checked = await preflight(config, createContainer().get(Resolver).plan(config), log);
    store = await RunStore.create(o.out ?? freeDir(join(config.outDir, config.name)), config, { log });
    log(`run directory: ${store.dir}`);
  }
  // Ctrl-C or a polite kill releases the lock at once; a SIGKILL leaves it for the next writer to take over.
  const stop = (signal: NodeJS.Signals) => {
    store.close();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await runLoop(store.config, store, { log, checked, freshOptimizer: o.freshOptimizer });
  } catch (err) {
    await store.setStatus('failed', (err as Error).message);
    throw err;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    store.close();
  }
}

/** The default run directory, or the first free `-2`, `-3`... beside it, so a second run never clobbers the first. */
function freeDir(base: string): string {
  if (!existsSync(base)) return base;
  for (let i = 2; ; i++) if (!existsSync(`${base}-${i}`)) return `${base}-${i}`;
}
