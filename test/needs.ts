import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { loadNative, nativeUnavailable } from '../src/backend/native/library.js';

/**
 * The optional Debian packages some tests need. On a bare machine (Node and `npm ci` only)
 * those tests skip, each suite saying in one line what to install; `.ci/run` installs them
 * all and sets COEVOLVE_REQUIRE_*, so there a missing one fails instead. COEVOLVE_HIDE
 * (a comma list of these names) makes present ones count as missing, and COEVOLVE_NATIVE=none
 * turns the native library off: `.ci/bare` runs the suite that way.
 */
export type Component = 'native' | 'browser' | 'redis';

const COMPONENTS: Record<Component, { what: string; apt: string; require: string; find(): string | undefined }> = {
  native: {
    what: 'a native matrix library',
    apt: 'libopenblas0-pthread',
    require: 'COEVOLVE_REQUIRE_NATIVE',
    find: () => loadNative()?.file,
  },
  browser: { what: 'chromium', apt: 'chromium', require: 'COEVOLVE_REQUIRE_BROWSER', find: () => onPath('chromium') },
  redis: {
    what: 'redis-server',
    apt: 'redis-server',
    require: 'COEVOLVE_REQUIRE_REDIS',
    find: () => onPath('redis-server'),
  },
};

const hidden = new Set(
  (process.env.COEVOLVE_HIDE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** The executable `name` in a folder of PATH, as a shell would find it. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter))
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

/** Where `c` is (a file), or undefined when it is missing or hidden; under its COEVOLVE_REQUIRE_* a missing one throws. */
export function find(c: Component): string | undefined {
  const k = COMPONENTS[c];
  const at = hidden.has(c) ? undefined : k.find();
  if (!at && process.env[k.require])
    throw new Error(
      `${k.require} is set but ${k.what} is missing (apt-get install ${k.apt})${c === 'native' ? `: ${nativeUnavailable()}` : ''}`,
    );
  return at;
}

const said = new Set<string>();

/**
 * Where `c` is; when it is missing, skips the calling suite or test (call it from `before` or
 * the test), printing one line that says what is missing and what to install.
 */
export function need(ctx: Mocha.Context, c: Component, why = ''): string {
  const at = find(c);
  if (at) return at;
  const inHook = (ctx.test as { type?: string } | undefined)?.type === 'hook';
  const title = (inHook ? ctx.test?.parent?.fullTitle() : ctx.test?.fullTitle()) ?? '';
  const line = `  skipped: ${title}: needs ${COMPONENTS[c].what}${why ? ` (${why})` : ''}; apt-get install ${COMPONENTS[c].apt}`;
  if (!said.has(line)) console.log(line);
  said.add(line);
  return ctx.skip();
}

/**
 * The backend the tests that run experiments, servers and workers use: wasm, the fastest
 * backend that loads everywhere (its SIMD kernels; with a native library its matrix products
 * are native too), never tfjs's plain `cpu`, which without a native library is many times slower.
 */
export const TEST_BACKEND = 'wasm' as const;
