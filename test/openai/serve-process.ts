import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_BACKEND } from '../needs.js';

/** `coevolve serve` of `model` (the shipped 2-digit addition base by default) on a free port, resolved with its URL once it listens; `log()` is its stderr so far. */
export function startServe(
  args: string[] = [],
  model = 'checkpoints/base-add2',
): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const child = spawn(
    process.execPath,
    ['bin/coevolve.js', 'serve', model, '--port', '0', '--backend', TEST_BACKEND, ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      const m = /serving '.*' at (\S+)/.exec((err += d.toString()));
      if (m) resolve({ url: m[1], child, log: () => err });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}
