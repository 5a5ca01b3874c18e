import { runExperiment } from '../engine/experiment.js';
import { releasingLock } from './lifetime.js';

export interface RunOptions {
  set: string[];
  resume?: string;
  out?: string;
  freshOptimizer?: boolean;
}

/**
 * `coevolve run CONFIG [--set k=v ...] [--out DIR]` starts a run; `coevolve run --resume DIR`
 * continues one (see runExperiment). Ctrl-C or a polite kill releases the run's lock at
 * once; a SIGKILL leaves it for the next writer to take over.
 */
export async function runCommand(configPath: string | undefined, o: RunOptions): Promise<void> {
  if (o.resume && (configPath || o.set.length))
    throw new Error('run --resume DIR takes the config stored in DIR; give no CONFIG or --set');
  if (!o.resume && o.freshOptimizer) throw new Error('run: --fresh-optimizer applies to --resume only');
  if (!o.resume && !configPath) throw new Error('run: give a CONFIG file, or --resume DIR');
  await releasingLock((onOpen) => runExperiment(configPath, { ...o, onOpen }));
}
