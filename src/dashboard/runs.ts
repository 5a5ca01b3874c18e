import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { RunStore } from '../store/run.js';

/** A run as the dashboard lists it. */
export interface RunInfo {
  /** its path under the dashboard's root, '/'-separated: the id URLs use */
  id: string;
  name: string;
  status: string;
  iterations: number;
  planned: number;
  updatedAt: string;
  /** the last iteration with metrics (runs write metrics every iteration, checkpoints less often) */
  lastMetrics: number;
}

/** Every run directory (one holding run.json and config.yaml) under `root`, up to `depth` levels down. */
export function findRuns(root: string, depth = 4): string[] {
  const out: string[] = [];
  const walk = (dir: string, left: number) => {
    if (existsSync(join(dir, 'run.json')) && existsSync(join(dir, 'config.yaml'))) {
      out.push(dir);
      return;
    }
    if (left === 0) return;
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries.sort()) {
      const p = join(dir, e);
      if (
        e !== 'checkpoints' &&
        e !== 'episodes' &&
        e !== 'node_modules' &&
        !e.startsWith('.') &&
        statSync(p, { throwIfNoEntry: false })?.isDirectory()
      )
        walk(p, left - 1);
    }
  };
  walk(resolve(root), depth);
  return out;
}

/** The run directory of `id` under `root`, or undefined: an id never leaves the root. */
export function runDir(root: string, id: string): string | undefined {
  const dir = resolve(root, ...id.split('/'));
  const rel = relative(resolve(root), dir);
  if (rel.startsWith('..') || rel === '' || rel.split(sep).includes('..')) return undefined;
  return existsSync(join(dir, 'run.json')) ? dir : undefined;
}

/** The id of a run directory under `root`: its relative path, '/'-separated. */
export function runId(root: string, dir: string): string {
  return relative(resolve(root), dir).split(sep).join('/');
}

/** Opens a run read only (no lock, nothing written) and summarises it. */
export async function runInfo(root: string, dir: string): Promise<{ info: RunInfo; store: RunStore<unknown> }> {
  const store = await RunStore.open(dir, { kind: 'any' });
  const rows = store.readMetrics();
  const r = store.record;
  return {
    store,
    info: {
      id: runId(root, dir),
      name: store.name,
      status: r.status,
      iterations: r.iterations,
      planned: store.planned,
      updatedAt: r.updatedAt,
      lastMetrics: rows.length ? rows[rows.length - 1].iteration : 0,
    },
  };
}
