// The package's entry, what `import … from 'coevolve'` loads. coevolve ships TypeScript and
// runs it through tsx's loader, as the `coevolve` command does, so this registers the loader
// once per process (a plain `node` script needs no build step either) and re-exports the API
// of ./index.ts by name; test/api/entry.test.ts checks that the two lists agree.
import { register } from 'tsx/esm/api';

const registered = Symbol.for('coevolve.tsx-registered');
if (!globalThis[registered]) {
  register();
  globalThis[registered] = true;
}
const api = await import('./index.ts');

export const {
  defineArena,
  defineEvaluator,
  defineJudge,
  defineRole,
  defineTaskFamily,
  isDefinition,
  loadPlugins,
  runExperiment,
  ConfigError,
  loadConfig,
  parseConfig,
  fromRun,
  arenaOptions,
  invalid,
  valid,
  Rng,
  arithmetic,
  strings,
} = api;
