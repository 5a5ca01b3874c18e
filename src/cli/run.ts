import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import { runLoop } from '../engine/loop.js';
import { createContainer, Resolver } from '../engine/registry.js';
import { RunStore } from '../store/run.js';

/**
 * `coevolve run CONFIG [--set k=v ...] [--out DIR]` starts a run; `coevolve run --resume DIR`
 * continues one. The config is validated and every name resolved before anything is written.
 */
export async function runCommand(configPath: string | undefined, o: { set: string[]; resume?: string; out?: string }): Promise<void> {
  let store: RunStore;
  if (o.resume) {
    if (configPath || o.set.length) throw new Error('run --resume DIR takes the config stored in DIR; give no CONFIG or --set');
    store = await RunStore.open(o.resume);
  } else {
    if (!configPath) throw new Error('run: give a CONFIG file, or --resume DIR');
    const config = loadConfig(configPath, o.set);
    createContainer().get(Resolver).plan(config); // unknown names stop here, before any work
    store = await RunStore.create(o.out ?? freeDir(join(config.outDir, config.name)), config);
    console.error(`run directory: ${store.dir}`);
  }
  try {
    await runLoop(store.config, store);
  } catch (err) {
    await store.setStatus('failed', (err as Error).message);
    throw err;
  }
}

/** The default run directory, or the first free `-2`, `-3`... beside it, so a second run never clobbers the first. */
function freeDir(base: string): string {
  if (!existsSync(base)) return base;
  for (let i = 2; ; i++) if (!existsSync(`${base}-${i}`)) return `${base}-${i}`;
}
