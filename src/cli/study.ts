import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { playStudy } from '../study/run.js';
import { loadStudy } from '../study/schema.js';
import { summaryTable } from '../study/summary.js';

/** `coevolve study FILE [--only a,b] [--summary]`: plays what is missing, then writes `<outDir>/<name>/summary.md`. Returns the exit code. */
export async function studyCommand(file: string, o: { only?: string[]; summaryOnly?: boolean }): Promise<number> {
  const s = loadStudy(file);
  // the package's own command, from src/cli (run from source) or dist/src/cli (built)
  const bin = ['../../bin/coevolve.js', '../../../bin/coevolve.js']
    .map((p) => fileURLToPath(new URL(p, import.meta.url)))
    .find((p) => existsSync(p))!;
  const failures = o.summaryOnly ? [] : await playStudy(s, { only: o.only, bin });
  const table = summaryTable(s);
  if (!o.summaryOnly) writeFileSync(join(s.outDir, s.name, 'summary.md'), table + '\n');
  console.log(table);
  for (const f of failures) console.error(f.message);
  return failures.length ? 1 : 0;
}
