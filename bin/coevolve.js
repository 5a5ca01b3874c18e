#!/usr/bin/env node
// The `coevolve` command. The package ships TypeScript and runs it through tsx's loader,
// registered here so the command works without a build step (the flag tells the package's
// entry, src/api/entry.js, which plugins import, that it is registered already).
import { register } from 'tsx/esm/api';

register();
globalThis[Symbol.for('coevolve.tsx-registered')] = true;
await import('../src/cli/main.ts');
