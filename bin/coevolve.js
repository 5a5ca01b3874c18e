#!/usr/bin/env node
// The `coevolve` command: the compiled CLI in dist/, which `npm ci` (prepare) and `npm run
// build` write. Nothing is compiled at start; tsx is loaded only for plugins written in TypeScript.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('coevolve: dist/ is missing; run `npm run build` (npm ci runs it) in the coevolve folder');
  process.exit(1);
}
await import(main.href);
