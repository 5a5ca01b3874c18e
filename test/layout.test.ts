/**
 * Dependencies run one way (issue 47). The kinds live at the top level (roles/, arenas/,
 * judges/, memory/) and build on src/; src/ reaches them only through its composition point,
 * the registry of kinds (src/registry.ts). Read from the import statements of every .ts file
 * of those five folders: `from '...'`, `import '...'` and `import('...')`, type-only ones
 * included (a type is a dependency of the design as much as a value).
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const KINDS = ['roles', 'arenas', 'judges', 'memory'];

/** The files under src/ that may import the kinds, and why. */
export const COMPOSITION_POINTS: Readonly<Record<string, string>> = {
  'src/registry.ts': 'the registry of kinds: it lists every kind and builds each (the one composition point)',
};

/**
 * Imports of a kind from src/ allowed besides the composition points, each with its reason.
 * None today: keep it that way, or say here why one must stay.
 */
export const ALLOWED: Readonly<Record<string, string>> = {};

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...tsFiles(rel));
    else if (name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** The repository files `file` imports (relative specifiers only; packages are not ours). */
export function importsOf(file: string, text: string): string[] {
  const out = new Set<string>();
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const m of text.matchAll(re)) {
    const target = normalize(join(dirname(file), m[1]));
    const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')];
    const found = candidates.find((c) => c.endsWith('.ts') && existsSync(join(ROOT, c)));
    if (found) out.add(found);
  }
  return [...out];
}

/** The import graph of `files`: file -> files it imports, among `files`. */
export function importGraph(files: readonly string[], read = (f: string) => readFileSync(join(ROOT, f), 'utf8')) {
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f, read(f)).filter((t) => known.has(t))]));
}

/** Every import cycle of `graph`, as the files of each strongly connected component (Tarjan), longer than one file or a file importing itself. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** Imports from a file of src/ into a kind's folder that neither a composition point nor an allowed exception explains. */
export function backArrows(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    if (!file.startsWith('src/') || Object.hasOwn(COMPOSITION_POINTS, file)) continue;
    for (const t of targets)
      if (KINDS.includes(t.split('/')[0]) && !Object.hasOwn(ALLOWED, `${file} -> ${t}`)) out.push(`${file} -> ${t}`);
  }
  return out;
}

describe('layout: dependencies run one way', () => {
  const files = ['src', ...KINDS].flatMap(tsFiles);
  const graph = importGraph(files);

  it('reads the imports of every file: from, side-effect import and import()', () => {
    expect(files.length).to.be.greaterThan(100);
    const text = [
      "import a from './types.js';",
      'export * from "../games/types.js";',
      "import './arena.js';",
      "const r = await import('./role.js');",
      "import { z } from 'zod';",
      "import b from './no-such-file.js';",
    ].join('\n');
    expect(importsOf('src/core/x.ts', text)).to.deep.equal([
      'src/core/types.ts',
      'src/games/types.ts',
      'src/core/arena.ts',
      'src/core/role.ts',
    ]);
    expect(importsOf('src/registry.ts', readFileSync(join(ROOT, 'src/registry.ts'), 'utf8'))).to.include(
      'arenas/game.ts',
    );
    expect(importsOf('src/cli/main.ts', readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8'))).to.include(
      'src/cli/worker.ts', // an import('...') of a command's module
    );
  });

  it('no file under src/ imports roles/, arenas/, judges/ or memory/ except the composition point', () => {
    const arrows = backArrows(graph);
    expect(arrows, `imports of a kind from src/ outside ${Object.keys(COMPOSITION_POINTS).join(', ')}`).to.deep.equal(
      [],
    );
  });

  it('among the kinds, only arenas/ uses the others (an arena plays roles, keeps a bank, reads a judge); roles/, judges/ and memory/ use none', () => {
    const across = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((t) => {
          const [from, to] = [file.split('/')[0], t.split('/')[0]];
          return from !== 'arenas' && from !== 'src' && from !== to && KINDS.includes(to);
        })
        .map((t) => `${file} -> ${t}`),
    );
    expect(across).to.deep.equal([]);
  });

  it('the composition points and allowed exceptions still exist (a stale one is removed, not kept)', () => {
    for (const file of Object.keys(COMPOSITION_POINTS)) expect(existsSync(join(ROOT, file)), file).to.equal(true);
    for (const arrow of Object.keys(ALLOWED)) {
      const [file, target] = arrow.split(' -> ');
      expect(graph.get(file) ?? [], arrow).to.include(target);
    }
  });

  it('no import cycles among the files of src/, roles/, arenas/, judges/ and memory/', () => {
    const cycles = importCycles(graph);
    expect(
      cycles.map((c) => c.join(' -> ')),
      'import cycles (each the files of one)',
    ).to.deep.equal([]);
  });

  it('finds a back-arrow and a cycle when there is one', () => {
    const g = new Map<string, string[]>([
      ['src/engine/a.ts', ['src/engine/b.ts', 'arenas/game.ts']],
      ['src/engine/b.ts', ['src/engine/c.ts']],
      ['src/engine/c.ts', ['src/engine/a.ts']],
      ['src/registry.ts', ['judges/verifier.ts']],
      ['arenas/game.ts', ['src/core/types.ts']],
      ['src/core/types.ts', []],
    ]);
    expect(backArrows(g)).to.deep.equal(['src/engine/a.ts -> arenas/game.ts']);
    expect(importCycles(g)).to.deep.equal([['src/engine/a.ts', 'src/engine/b.ts', 'src/engine/c.ts']]);
  });
});
