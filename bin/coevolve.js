#!/usr/bin/env node
// The `coevolve` command. The package ships TypeScript and runs it through tsx's loader,
// registered here so the command works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
