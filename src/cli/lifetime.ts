/** What the long-running commands (run, pretrain, serve, dashboard, worker) share. */

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/** Warns when a server binds beyond loopback with no API key: anyone who reaches it may use `what`. */
export function warnIfOpen(host: string, apiKey: string | undefined, what: string): void {
  if (!LOOPBACK.includes(host) && !apiKey)
    console.error(`warning: ${what} on ${host} has no API key: anyone who reaches it can use it (pass --api-key)`);
}

/**
 * Resolves once SIGINT or SIGTERM has arrived and `close` has finished. A second signal while it
 * closes is the user insisting: the process leaves at once, saying it did not close cleanly.
 */
export function untilStopped(close: () => Promise<void>): Promise<void> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const force = (signal: string) => {
    console.error(`${signal} again: leaving without closing cleanly`);
    process.exit(1);
  };
  return new Promise<void>((done) => {
    const stop = () => {
      for (const s of signals) {
        process.removeListener(s, stop);
        process.once(s, force);
      }
      void close().then(done);
    };
    for (const s of signals) process.on(s, stop);
  });
}

/**
 * Runs `work`, which opens a run and hands its store to `onOpen`: Ctrl-C or a polite kill
 * releases the run's lock at once and leaves (exit 130 or 143); a SIGKILL leaves the lock for
 * the next writer to take over.
 */
export async function releasingLock<T>(work: (onOpen: (store: { close(): void }) => void) => Promise<T>): Promise<T> {
  let opened: { close(): void } | undefined;
  const stop = (signal: NodeJS.Signals) => {
    opened?.close();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await work((store) => (opened = store));
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}
