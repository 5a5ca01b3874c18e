/**
 * Loads the modules a config names under `plugins` and collects the definitions each
 * exports. A path (`./my-plugin.ts`, `/abs/plugin.js`) is relative to the working directory,
 * as every path of a config is; anything else is a package name. Each failure names the
 * plugin and happens before any work.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDefinition, type Definition, type PluginDefinition } from './definition.js';

export type { PluginDefinition } from './definition.js';

/** A definition and who made it, as errors name them (`plugin ./my-plugin.ts`). */
const EXPECTED =
  'export what defineArena, defineJudge, defineRole, defineTaskFamily or defineEvaluator return (named exports, the default export, or a list of them)';

/** The definitions of every plugin in `specs`, in order; throws naming the first plugin that fails. */
export async function loadPlugins(specs: readonly string[], cwd = process.cwd()): Promise<PluginDefinition[]> {
  const out: PluginDefinition[] = [];
  for (const spec of specs) {
    let mod: Record<string, unknown>;
    try {
      mod = await importPlugin(spec, cwd);
    } catch (e) {
      throw new Error(`plugin ${spec}: cannot load: ${firstLine((e as Error).message)}`, { cause: e });
    }
    const found = new Set<Definition>();
    for (const value of Object.values(mod))
      for (const x of Array.isArray(value) ? value : [value]) if (isDefinition(x)) found.add(x);
    if (found.size === 0) {
      const names = Object.keys(mod);
      throw new Error(
        `plugin ${spec}: exports nothing coevolve can use (${names.length ? `exports: ${names.join(', ')}` : 'no exports'}); ${EXPECTED}`,
      );
    }
    for (const d of found) out.push({ ...d, source: `plugin ${spec}` });
  }
  return out;
}

function isPath(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/') || spec === '.' || spec === '..';
}

/** Imports the module `spec` names (a path from `cwd`, or a package), TypeScript included: a plugin's, or a reward function's. */
export async function importPlugin(spec: string, cwd = process.cwd()): Promise<Record<string, unknown>> {
  if (isPath(spec)) {
    const file = resolve(cwd, spec);
    if (!existsSync(file)) throw new Error(`no such file ${file}`);
    return importFile(file);
  }
  // A package beside coevolve resolves from here; one installed only where the run is
  // started (a global coevolve command) is found by its package.json under cwd.
  try {
    return await import(spec);
  } catch (e) {
    const entry = packageEntry(spec, cwd);
    if (!entry) throw e;
    return importFile(entry);
  }
}

/**
 * Imports a plugin file; one written in TypeScript first gets tsx's loader, once per thread.
 * The package runs compiled, so tsx is loaded only for such plugins; from source (tests,
 * scripts) a TypeScript loader is already in place.
 */
async function importFile(file: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?tsx?$/.test(file) && import.meta.url.endsWith('.js')) {
    const registered = Symbol.for('coevolve.tsx-registered');
    const flags = globalThis as Record<symbol, unknown>;
    if (!flags[registered]) {
      const { register } = await import('tsx/esm/api');
      register();
      flags[registered] = true;
    }
  }
  return import(pathToFileURL(file).href);
}

/** The ESM entry of package `name` in the nearest node_modules above `cwd`, if any. */
function packageEntry(name: string, cwd: string): string | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name);
    if (existsSync(join(root, 'package.json'))) {
      const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        exports?: unknown;
        module?: string;
        main?: string;
      };
      const rel = exportTarget(pkg.exports) ?? pkg.module ?? pkg.main ?? 'index.js';
      return join(root, rel);
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The file `exports` maps '.' to under the import condition (Node's conditions, in its order). */
function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (typeof exports !== 'object' || exports === null) return undefined;
  const map = exports as Record<string, unknown>;
  if ('.' in map) return exportTarget(map['.']);
  for (const cond of ['import', 'node', 'default']) if (cond in map) return exportTarget(map[cond]);
  return undefined;
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
