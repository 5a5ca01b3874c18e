// Mutation testing with StrykerJS, kept out of `npm test`: `npm run mutate` (slow: every mutant
// reruns tests), or narrow it, e.g. `npx stryker run --mutate src/rl/apply.ts`.
//
// With mocha 12 there are two setups, chosen by whether the mocha runner plugin is installed:
// - Node >= 22: Stryker 10's mocha runner (devDependencies @stryker-mutator/core and
//   @stryker-mutator/mocha-runner, both ^10), in-process with tsx and per-test coverage.
// - Node 20: Stryker 10 refuses to start, and Stryker 9's mocha runner cannot load mocha 12
//   (it requires mocha/lib/cli/run-helpers, which mocha 12 renamed), so the command runner
//   reruns mocha for each mutant (devDependency @stryker-mutator/core ^9.6 only), stopping at
//   the first failure.
import { createRequire } from 'node:module';

const modern = (() => {
  try {
    createRequire(import.meta.url).resolve('@stryker-mutator/mocha-runner');
    return true;
  } catch {
    return false;
  }
})();

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['src/rl/**/*.ts', 'src/serving/**/*.ts', 'src/models/**/*.ts', 'src/store/**/*.ts'],
  ...(modern
    ? {
        testRunner: 'mocha',
        mochaOptions: { config: '.mocharc.json' },
        testRunnerNodeArgs: ['--import', 'tsx'],
        coverageAnalysis: 'perTest',
      }
    : {
        testRunner: 'command',
        commandRunner: { command: 'npx mocha --bail' },
        coverageAnalysis: 'off',
      }),
  checkers: [],
  timeoutMS: 120000,
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['runs', 'reports', 'dist', '.ci'],
};
