/**
 * One writer per run directory: an exclusive lock file, `run.lock`, holding who writes.
 *
 * The file is made whole in a private temporary file and linked into place, so it either
 * exists with its full content or not at all (link fails if the name is taken, atomically).
 * A lock whose holder is gone (killed with SIGKILL, say) is stale: its process no longer
 * exists on this host, or the pid now belongs to a process started at another time. A stale
 * lock is taken over under a short-lived mutex (`run.lock.takeover`, a directory: mkdir is
 * atomic), so two resumes of one killed run cannot both take it over.
 */
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const LOCK_FILE = 'run.lock';

/** Who holds a lock: plain JSON, as stored in `run.lock`. */
export interface LockHolder {
  pid: number;
  host: string;
  /** when the lock was taken (ISO) */
  since: string;
  /** the holder's start time from /proc (clock ticks since boot), to tell a reused pid */
  procStart?: string;
  /** a random token, so a holder releases only its own lock */
  token: string;
}

/** Thrown when another live process holds the lock. */
export class RunLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | undefined,
    why: string,
  ) {
    super(`run directory ${dir} is in use: ${why}`);
    this.name = 'RunLockedError';
  }
}

/** A held lock on a run directory; `release()` removes it if it is still ours. */
export class RunLock {
  private released = false;

  private constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    if (held.size === 0) process.once('exit', releaseAll);
    held.add(this);
  }

  /**
   * Takes the lock on `dir` (which must exist), or throws RunLockedError naming the holder.
   * A stale lock is taken over and `log` says whose it was.
   */
  static acquire(dir: string, log: (line: string) => void = () => {}): RunLock {
    const me = describeSelf();
    for (let attempt = 0; attempt < 50; attempt++) {
      if (tryLink(dir, me)) return new RunLock(dir, me);
      const holder = readHolder(dir);
      const state = holder ? liveness(holder) : 'unreadable';
      if (state === 'alive')
        throw new RunLockedError(
          dir,
          holder,
          `pid ${holder!.pid} on ${holder!.host} writes it since ${holder!.since} (${join(dir, LOCK_FILE)})`,
        );
      if (state === 'elsewhere') {
        throw new RunLockedError(
          dir,
          holder,
          `pid ${holder!.pid} on another host, ${holder!.host}, writes it since ${holder!.since}; if that process is gone, delete ${join(dir, LOCK_FILE)}`,
        );
      }
      if (takeOver(dir, holder, me)) {
        log(
          `run lock: took over the stale lock of pid ${holder?.pid ?? '?'} on ${holder?.host ?? '?'} (since ${holder?.since ?? '?'}), whose process is gone`,
        );
        return new RunLock(dir, me);
      }
      sleepMs(20); // someone else is taking it over; look again
    }
    throw new RunLockedError(dir, readHolder(dir), `could not take ${join(dir, LOCK_FILE)} after 50 attempts`);
  }

  /** Removes the lock file if it still holds this lock's token. Safe to call twice. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this);
    if (held.size === 0) process.removeListener('exit', releaseAll);
    if (readHolder(this.dir)?.token === this.holder.token) unlinkSync(join(this.dir, LOCK_FILE));
  }

  /** Throws unless the lock file still names this lock (someone deleted or replaced it). */
  assertHeld(): void {
    if (this.released || readHolder(this.dir)?.token !== this.holder.token) {
      throw new RunLockedError(this.dir, readHolder(this.dir), 'this process no longer holds its run.lock');
    }
  }
}

/** Locks this process holds, released when it exits normally (a killed one leaves them stale). */
const held = new Set<RunLock>();
const releaseAll = () => {
  for (const l of [...held]) l.release();
};

/** Reads `run.lock`; undefined when it is missing or not a lock record. */
export function readHolder(dir: string): LockHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockHolder;
    return typeof h?.pid === 'number' && typeof h.host === 'string' && typeof h.token === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

function describeSelf(): LockHolder {
  const token = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  return {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    procStart: procStart(process.pid),
    token,
  };
}

/** Creates `run.lock` whole, atomically; false when the name is taken. */
function tryLink(dir: string, me: LockHolder): boolean {
  const tmp = join(dir, `${LOCK_FILE}.${me.token}`);
  const fd = openSync(tmp, 'wx');
  try {
    writeSync(fd, JSON.stringify(me));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, join(dir, LOCK_FILE));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

type Liveness = 'alive' | 'dead' | 'elsewhere' | 'unreadable';

function liveness(h: LockHolder): Liveness {
  if (h.host !== hostname()) return 'elsewhere';
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    // EPERM: the process exists but is not ours to signal
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'dead';
  }
  const now = procStart(h.pid);
  return h.procStart !== undefined && now !== undefined && now !== h.procStart ? 'dead' : 'alive';
}

/**
 * Replaces a stale lock under the takeover mutex. The lock is read again inside the mutex,
 * so a lock another process took over meanwhile is never removed.
 */
function takeOver(dir: string, stale: LockHolder | undefined, me: LockHolder): boolean {
  const mutex = join(dir, `${LOCK_FILE}.takeover`);
  try {
    mkdirSync(mutex);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // a taker killed inside the mutex leaves it behind; a takeover lasts microseconds
    if (Date.now() - statSync(mutex).mtimeMs > 10_000) rmdirSync(mutex);
    return false;
  }
  try {
    const now = readHolder(dir);
    if (now?.token !== stale?.token) return false;
    if (now === undefined) {
      // an unreadable lock is replaced only once it is old enough not to be mid-write
      try {
        if (Date.now() - statSync(join(dir, LOCK_FILE)).mtimeMs < 2_000) return false;
      } catch {
        /* gone already */
      }
    }
    try {
      unlinkSync(join(dir, LOCK_FILE));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    return tryLink(dir, me);
  } finally {
    rmdirSync(mutex);
  }
}

/** Field 22 of /proc/PID/stat (start time since boot); undefined off Linux. */
function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
