/**
 * Making a base by its config, as `coevolve pretrain CONFIG` and a run that needs a missing
 * base do: an unfinished run of the same config (killed, or failed) is resumed rather than
 * started again, so an hour of pretraining is never lost to a kill.
 */
import { existsSync } from 'node:fs';
import { RunStore } from '../store/run.js';
import { pretrain, pretrainRunDir, resumePretrain, type PretrainOptions, type PretrainResult } from './run.js';
import { loadPretrainConfig, parsePretrainConfig, type PretrainConfig } from './schema.js';

/** Makes the base of the pretrain config at `file`: resumes its unfinished run if there is one, else starts a new run (`fresh`: always). */
export async function makeBase(file: string, o: PretrainOptions & { fresh?: boolean } = {}): Promise<PretrainResult> {
  const config = loadPretrainConfig(file);
  const log = o.log ?? console.error;
  const unfinished = o.fresh || o.runDir ? undefined : await unfinishedRun(config);
  if (unfinished) {
    log(`${unfinished.dir} holds an unfinished pretrain of ${file} (step ${unfinished.step}): resuming it`);
    return resumePretrain(unfinished.dir, o);
  }
  return pretrain(config, o);
}

/** The newest run directory beside the config's default one that holds an unfinished pretrain of the same config. */
export async function unfinishedRun(config: PretrainConfig): Promise<{ dir: string; step: number } | undefined> {
  const base = pretrainRunDir(config);
  const dirs = [base];
  for (let i = 2; existsSync(`${base}-${i}`); i++) dirs.push(`${base}-${i}`);
  const same = JSON.stringify(config);
  for (const dir of dirs.reverse()) {
    if (!existsSync(dir)) continue;
    let store: RunStore<unknown>;
    try {
      store = await RunStore.open(dir, { kind: 'pretrain' });
    } catch {
      continue; // not a pretrain run (or not a run): never resumed by guess
    }
    const r = store.record;
    let stored: string | undefined;
    try {
      stored = JSON.stringify(parsePretrainConfig(store.config, dir));
    } catch {
      stored = undefined;
    }
    if (r.status !== 'done' && stored === same) return { dir, step: r.iterations };
  }
  return undefined;
}
