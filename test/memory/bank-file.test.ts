import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BankFile } from '../../memory/bank-file.js';
import { MemoryOpError } from '../../memory/bank.js';

const LIMITS = { maxEntries: 100_000, maxEntryChars: 5_000 };

/** Runs the writer process until it has acknowledged `acks` more entries, then SIGKILLs it; returns the last acknowledged n. */
function killWriterAfter(path: string, acks: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/memory/bank-writer.ts', path], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let last = -1,
      seen = 0,
      buf = '',
      err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        last = Number(l);
        if (++seen === acks) child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(last) : reject(new Error(`writer exited ${code}: ${err}`)),
    );
  });
}

describe('memory/bank-file', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'bank-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes each operation before it resolves; a reopened bank holds the same entries', async () => {
    const path = join(dir, 'bank.json');
    const bank = await BankFile.open(path, { clock: () => 7 });
    await bank.apply({ op: 'ADD', text: 'ann city rome' });
    await bank.apply({ op: 'ADD', text: 'bob pet cat' });
    await bank.apply({ op: 'DELETE', id: 'm0' });
    await bank.apply({ op: 'NOOP' });
    expect(
      await bank.apply({ op: 'DELETE', id: 'm0' }).then(
        () => null,
        (e: unknown) => e,
      ),
    ).to.be.instanceOf(MemoryOpError);
    const again = await BankFile.open(path);
    expect(again.bank.snapshot()).to.deep.equal({
      entries: [{ id: 'm1', text: 'bob pet cat', created: 7, updated: 7 }],
      next: 2,
    });
  });

  it('refuses a corrupt file or a file that is not a bank with an error naming it, and never writes to it', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"entries": [{"id": "m0", "te', /not valid JSON/],
      ['[1, 2]', /not a bank object/],
      ['{"entries": [{"id": "m0"}], "next": 1}', /entry 0 is not/],
      ['{"entries": [], "next": -1}', /'next'/],
      [
        JSON.stringify({ entries: [{ id: 'm0', text: 'x'.repeat(6_000), created: 0, updated: 0 }], next: 1 }),
        /exceeds maxEntryChars/,
      ],
    ];
    for (const [text, why] of cases) {
      const path = join(dir, 'bad.json');
      writeFileSync(path, text);
      const err = await BankFile.open(path, { limits: LIMITS }).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(why).and.to.include(path).and.to.include('left as it is');
      expect(readFileSync(path, 'utf8')).to.equal(text);
    }
  });

  it('survives SIGKILL of a real writer mid-write and restarts: no acknowledged entry lost, none half-written', async () => {
    const path = join(dir, 'bank.json');
    let acked = -1;
    for (const acks of [40, 25, 60]) {
      acked = await killWriterAfter(path, acks);
      const bank = await BankFile.open(path, { limits: LIMITS });
      const texts = bank.bank.entries.map((e) => e.text);
      // every entry whole and in order; the kill may land after writes the writer had not yet reported
      expect(texts.length).to.be.at.least(acked + 1);
      texts.forEach((t, n) => expect(t).to.equal(`entry ${n} ${'x'.repeat(2_000)}`));
    }
    expect(acked).to.be.at.least(124);
  });
});
