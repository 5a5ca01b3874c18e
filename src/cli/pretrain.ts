import { releasingLock } from './lifetime.js';

export interface PretrainCommandOptions {
  resume?: string;
  out?: string;
  overwrite?: boolean;
  fresh?: boolean;
}

/**
 * `coevolve pretrain CONFIG` makes a base as a run (resuming an unfinished run of the same
 * config unless --fresh); `coevolve pretrain --resume DIR` continues a given one. Ctrl-C or a
 * polite kill releases the run's lock at once; a SIGKILL leaves it for the next writer.
 */
export async function pretrainCommand(config: string | undefined, o: PretrainCommandOptions): Promise<unknown> {
  if (o.resume && config) throw new Error('pretrain --resume DIR takes the config stored in DIR; give no CONFIG');
  if (!o.resume && !config) throw new Error('pretrain: give a CONFIG file, or --resume DIR');
  if (o.resume && (o.fresh || o.out)) throw new Error('pretrain: --fresh and --out start a new run; not with --resume');
  const { makeBase } = await import('../pretrain/make.js');
  const { resumePretrain } = await import('../pretrain/run.js');
  return releasingLock((onOpen) => {
    const options = { overwrite: o.overwrite, runDir: o.out, onOpen };
    return o.resume ? resumePretrain(o.resume, options) : makeBase(config!, { ...options, fresh: o.fresh });
  });
}
