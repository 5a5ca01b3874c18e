import { MessageChannel, receiveMessageOnPort, type MessagePort, type TransferListItem } from 'node:worker_threads';

/** What a replica sends back: a result, or the message and stack of what it threw. */
export type Reply<T> = { result: T } | { error: string };

/**
 * A synchronous call into a worker thread: `send` posts a request, `receive` blocks this
 * thread until the worker has answered (Atomics.wait on a shared flag, then the answer is
 * taken off the port with receiveMessageOnPort). Blocking is what keeps the trainer's step
 * and the batching server's flush synchronous, so that work split over threads happens in
 * the same order, and batches form the same way, as on one thread.
 */
export class Link {
  readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly channel = new MessageChannel();
  private pending = false;

  constructor(
    readonly name: string,
    private readonly timeoutMs = 600_000,
  ) {
    this.channel.port1.unref();
  }

  /** the end the worker answers on (transfer it to the worker) */
  get remote(): MessagePort {
    return this.channel.port2;
  }

  send(request: unknown, transfer: TransferListItem[] = []): void {
    // an answer nobody waited for (this thread failed between send and receive) is dropped,
    // so one failed call does not poison the next
    if (this.pending) {
      try {
        this.receive();
      } catch {
        // its error belonged to the failed call
      }
    }
    Atomics.store(this.flag, 0, 0);
    this.pending = true;
    this.channel.port1.postMessage(request, transfer);
  }

  receive<T>(): T {
    if (!this.pending) throw new Error(`${this.name}: nothing was sent`);
    const until = Date.now() + this.timeoutMs;
    while (Atomics.load(this.flag, 0) === 0) {
      if (Date.now() > until)
        throw new Error(`${this.name}: no answer in ${this.timeoutMs / 1000} s (the worker thread may have died)`);
      Atomics.wait(this.flag, 0, 0, 1000);
    }
    this.pending = false;
    const got = receiveMessageOnPort(this.channel.port1);
    if (!got) throw new Error(`${this.name}: signalled an answer but sent none`);
    const reply = got.message as Reply<T>;
    if ('error' in reply) throw new Error(`${this.name}: ${reply.error}`);
    return reply.result;
  }

  close(): void {
    this.channel.port1.close();
  }
}

/** The worker's side of a Link: answers each request on `port` and raises the flag. */
export function serve<R>(
  port: MessagePort,
  flag: Int32Array,
  handle: (request: R) => { result: unknown; transfer?: TransferListItem[] },
): void {
  port.on('message', (request: R) => {
    let reply: Reply<unknown>;
    let transfer: TransferListItem[] = [];
    try {
      const out = handle(request);
      reply = { result: out.result };
      transfer = out.transfer ?? [];
    } catch (err) {
      reply = { error: (err as Error).stack ?? String(err) };
    }
    port.postMessage(reply, transfer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
}
