import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE, readHolder, RunLock, RunLockedError } from '../../src/store/lock.js';

/** The pid of a process that has exited, so a lock naming it is stale. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
  );
}

function plant(dir: string, holder: Record<string, unknown>): void {
  writeFileSync(
    join(dir, LOCK_FILE),
    JSON.stringify({ host: hostname(), since: '2026-01-01T00:00:00.000Z', token: 'planted', ...holder }),
  );
}

describe('store/RunLock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes who holds it, whole, and removes it on release', () => {
    const lock = RunLock.acquire(dir);
    const h = readHolder(dir)!;
    expect(h).to.include({ pid: process.pid, host: hostname(), token: lock.holder.token });
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).to.equal(false);
    lock.release(); // twice is harmless
  });

  it('refuses a second writer while the first holds it, naming the holder', () => {
    const first = RunLock.acquire(dir);
    let err: unknown;
    try {
      RunLock.acquire(dir);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(RunLockedError);
    expect((err as Error).message).to.include(`pid ${process.pid} on ${hostname()}`);
    first.release();
    RunLock.acquire(dir).release(); // free again once released
  });

  it('takes over a stale lock of a process that is gone, and says so', () => {
    const pid = deadPid();
    plant(dir, { pid });
    const said: string[] = [];
    const lock = RunLock.acquire(dir, (l) => said.push(l));
    expect(said.join()).to.include(`took over the stale lock of pid ${pid}`);
    expect(readHolder(dir)?.token).to.equal(lock.holder.token);
    lock.release();
  });

  it('treats a live pid with another start time as a reused pid, hence stale', function () {
    if (!existsSync('/proc/self/stat')) this.skip();
    plant(dir, { pid: process.pid, procStart: '1' });
    const said: string[] = [];
    RunLock.acquire(dir, (l) => said.push(l)).release();
    expect(said.join()).to.match(/took over the stale lock/);
  });

  it('refuses a lock held on another host, telling how to clear it', () => {
    plant(dir, { pid: 1, host: 'elsewhere.example' });
    expect(() => RunLock.acquire(dir)).to.throw(/on another host, elsewhere\.example.*delete .*run\.lock/);
    expect(readHolder(dir)?.token).to.equal('planted');
  });

  it('release leaves a lock that another process has since taken', () => {
    const lock = RunLock.acquire(dir);
    plant(dir, { pid: process.pid, token: 'someone-else' });
    expect(() => lock.assertHeld()).to.throw(/no longer holds its run\.lock/);
    lock.release();
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token).to.equal('someone-else');
  });
});
