import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { find } from './needs.js';

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server on 127.0.0.1 (no persistence); undefined when Debian's redis-server is missing (tests then skip with `need(this, 'redis')`), unless COEVOLVE_REQUIRE_REDIS. */
export async function startRedis(
  port?: number,
): Promise<{ url: string; port: number; process: ChildProcess; stop(): Promise<void> } | undefined> {
  const REDIS = find('redis');
  if (!REDIS) return undefined;
  const p = port ?? (await freePort());
  const child = spawn(REDIS, ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
