/** What the long-running commands (serve, dashboard, worker) share. */

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/** Warns when a server binds beyond loopback with no API key: anyone who reaches it may use `what`. */
export function warnIfOpen(host: string, apiKey: string | undefined, what: string): void {
  if (!LOOPBACK.includes(host) && !apiKey)
    console.error(`warning: ${what} on ${host} has no API key: anyone who reaches it can use it (pass --api-key)`);
}

/** Resolves once SIGINT or SIGTERM has arrived and `close` has finished. */
export function untilStopped(close: () => Promise<void>): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => void close().then(done);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
