/** What the long-running commands (serve, dashboard, worker) share. */

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
