import { makeMissingBases } from '../pretrain/bases.js';
import { join } from 'node:path';
import { loadConfig, parseConfig } from '../config/load.js';
import type { ExperimentInput } from '../config/schema.js';
import type { Definition } from '../plugins/definition.js';
import { freeRunDir, RunStore, type MetricsRow } from '../store/run.js';
import { runLoop } from './loop.js';
import { preflight, type Checked } from './preflight.js';
import { planExperiment } from '../registry.js';

/** How {@link runExperiment} runs: overrides, where the run goes, a run to resume, a script's own definitions, logging. */
export interface ExperimentOptions {
  /** `key.path=value` overrides, as `coevolve run --set` takes them */
  set?: string[];
  /** the run directory (default `<outDir>/<name>`, or the first free `-2`, `-3`... beside it) */
  out?: string;
  /** continue the run in this directory from its last checkpoint, with the config stored there (give no config) */
  resume?: string;
  /** resume with a fresh optimizer */
  freshOptimizer?: boolean;
  /** kinds defined by the script itself (what `define*` returned), beside the config's plugins; a resumed run needs them again */
  definitions?: readonly Definition[];
  /** where progress lines go (default stderr) */
  log?: (line: string) => void;
  /** how often a long evaluation says how far it got, in ms (default 30 s) */
  evalNoteMs?: number;
  /** make a missing base that a pretrain config under configs/ makes before the run starts (default true; src/pretrain/bases.ts) */
  makeBases?: boolean;
  /** called once the run directory is open and locked, before the first iteration (the CLI releases the lock on Ctrl-C with it) */
  onOpen?: (store: RunStore) => void;
}

/** What a finished run leaves: its directory and its metrics, one row per logged iteration. */
export interface ExperimentResult {
  dir: string;
  metrics: MetricsRow[];
}

/**
 * Runs an experiment: from a YAML file's path, or a config object (what a YAML file holds),
 * or resumes one (`{ resume: dir }`). A new run's config, plugins, names, paths,
 * checkpoints and task files are all checked before the run directory is made; the run's
 * lock is held while it runs, so a second writer is refused. A failure marks the run failed
 * and rethrows.
 */
export async function runExperiment(
  config: string | ExperimentInput | undefined,
  o: ExperimentOptions = {},
): Promise<ExperimentResult> {
  const log = o.log ?? ((l: string) => console.error(l));
  const set = o.set ?? [];
  let store: RunStore;
  let checked: Checked | undefined;
  if (o.resume) {
    if (config !== undefined || set.length)
      throw new Error('resume: a resumed run takes the config stored in its directory; give no config or overrides');
    store = await RunStore.open(o.resume, { write: true, log });
  } else {
    if (o.freshOptimizer) throw new Error('freshOptimizer applies to resume only');
    if (config === undefined) throw new Error('give a config (a YAML path or an object), or resume a run directory');
    const c = typeof config === 'string' ? loadConfig(config, set) : parseConfig(config, '<config object>', set);
    // a shipped experiment's base that was never committed is made by its pretrain config first
    if (o.makeBases !== false) {
      await makeMissingBases(
        c,
        async (file) => {
          const { makeBase } = await import('../pretrain/make.js');
          await makeBase(file, { log });
        },
        log,
      );
    }
    checked = await preflight(c, await planExperiment(c, o.definitions), log);
    store = await RunStore.create(o.out ?? freeRunDir(join(c.outDir, c.name)), c, { log });
    log(`run directory: ${store.dir}`);
  }
  try {
    o.onOpen?.(store);
    await runLoop(store.config, store, {
      log,
      checked,
      freshOptimizer: o.freshOptimizer,
      definitions: o.definitions,
      evalNoteMs: o.evalNoteMs,
    });
    return { dir: store.dir, metrics: store.readMetrics() };
  } catch (err) {
    await store.setStatus('failed', (err as Error).message);
    throw err;
  } finally {
    store.close();
  }
}
