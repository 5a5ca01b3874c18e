import { expect } from 'chai';
import { createProgress, formatDuration, formatNumber } from '../../src/progress/index.js';

class FakeStream {
  chunks: string[] = [];
  constructor(
    readonly isTTY: boolean,
    readonly columns?: number,
  ) {}
  write(s: string): boolean {
    this.chunks.push(s);
    return true;
  }
  get text(): string {
    return this.chunks.join('');
  }
}

function clock(stepMs: number) {
  let t = 0;
  return { now: () => t, advance: (ms = stepMs) => (t += ms) };
}

describe('progress', () => {
  describe('formatNumber', () => {
    it('keeps 3 significant digits', () => {
      expect(formatNumber(0.51234)).to.equal('0.512');
      expect(formatNumber(12.345)).to.equal('12.3');
      expect(formatNumber(-1.5)).to.equal('-1.5');
      expect(formatNumber(1234.5)).to.equal('1230');
      expect(formatNumber(42)).to.equal('42');
      expect(formatNumber(0)).to.equal('0');
      expect(formatNumber(0.000123456)).to.equal('1.23e-4');
      expect(formatNumber(3e7)).to.equal('3e+7');
      expect(formatNumber(NaN)).to.equal('NaN');
    });
  });

  it('puts a warning before the metrics, so a narrow terminal cuts the metrics and never it', () => {
    const plain = new FakeStream(false);
    const p = createProgress(4, { stream: plain, label: 'run' });
    p.tick(1, { solver: 0.5 });
    p.tick(2, { solver: 0.9 }, 'COLLAPSE: held_out_falls');
    expect(plain.text).to.equal('run iter 1/4 solver=0.5\nrun iter 2/4 COLLAPSE: held_out_falls solver=0.9\n');
    const tty = new FakeStream(true, 80);
    const q = createProgress(4, { stream: tty, now: clock(1000).now });
    q.tick(2, { solver: 0.123456, pass1: 0.25, valid: 1 }, 'COLLAPSE: entropy_collapse');
    expect(tty.text).to.include('COLLAPSE: entropy_collapse');
    expect(tty.text).to.not.include('valid=1'); // cut at the terminal's width
  });

  it('formatDuration reads as seconds, minutes or hours', () => {
    expect(formatDuration(4.4)).to.equal('4s');
    expect(formatDuration(185)).to.equal('3m05s');
    expect(formatDuration(3720)).to.equal('1h02m');
    expect(formatDuration(NaN)).to.equal('?');
  });

  describe('plain mode (not a TTY)', () => {
    it('writes one line per tick with the iteration and every metric', () => {
      const stream = new FakeStream(false);
      const p = createProgress(10, { stream });
      p.tick(1, { reward: 0.51234, loss: 1.23456 });
      p.tick(2, { reward: 0.6 });
      p.done();
      expect(stream.text).to.equal('iter 1/10 reward=0.512 loss=1.23\niter 2/10 reward=0.6\n');
      expect(stream.text).to.not.include('\r');
    });

    it('puts the label first and ignores ticks after done', () => {
      const stream = new FakeStream(false);
      const p = createProgress(3, { stream, label: 'train' });
      p.tick(3, {});
      p.done();
      p.tick(4, { x: 1 });
      expect(stream.text).to.equal('train iter 3/3\n');
    });
  });

  describe('bar mode (TTY)', () => {
    it('redraws one line with \\r: bar, percent, iteration, elapsed, ETA and metrics', () => {
      const stream = new FakeStream(true);
      const c = clock(2000);
      const p = createProgress(10, { stream, label: 'run', now: c.now });
      c.advance();
      p.tick(1, { reward: 0.51234, loss: 2 });
      c.advance();
      p.tick(2, { reward: 0.75, loss: 1.5 });
      expect(stream.chunks).to.have.length(2);
      for (const chunk of stream.chunks) {
        expect(chunk.startsWith('\r')).to.equal(true);
        expect(chunk).to.not.include('\n');
      }
      const last = stream.chunks[1]!;
      expect(last).to.include('run [');
      expect(last).to.include(' 20% ');
      expect(last).to.include(' 2/10 ');
      expect(last).to.include(' 4s '); // elapsed
      expect(last).to.include('eta 16s'); // 2 s per iteration, 8 left
      expect(last).to.include('reward=0.75 loss=1.5');
      expect(last).to.match(/\[####-{16}\]/);
      p.done();
      expect(stream.text.endsWith('\n')).to.equal(true);
    });

    it('shows at most a few metrics, or the ones asked for', () => {
      const stream = new FakeStream(true);
      const p = createProgress(5, { stream, now: () => 0 });
      p.tick(1, { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 });
      expect(stream.chunks[0]).to.include('a=1 b=2 c=3 d=4').and.not.include('e=5');
      const picked = new FakeStream(true);
      const q = createProgress(5, { stream: picked, metrics: ['f', 'b'], now: () => 0 });
      q.tick(1, { a: 1, b: 2, f: 6 });
      expect(picked.chunks[0]).to.include('f=6 b=2').and.not.include('a=1');
    });

    it('pads over a longer previous line and fits the terminal width', () => {
      const stream = new FakeStream(true, 60);
      const p = createProgress(100, { stream, now: () => 0 });
      p.tick(1, { reward: 0.123456, loss: 0.5, kl: 0.01, entropy: 2.5 });
      p.tick(2, {});
      expect(stream.chunks[0]!.length).to.be.at.most(60);
      expect(stream.chunks[1]!.length).to.equal(stream.chunks[0]!.length);
    });

    it('measures the ETA from where a resumed run started', () => {
      const stream = new FakeStream(true);
      const c = clock(1000);
      const p = createProgress(20, { stream, now: c.now });
      c.advance();
      p.tick(11, {}); // resumed after 10: one iteration in one second
      expect(stream.chunks[0]).to.include(' 55% ').and.include('11/20').and.include('eta 9s');
    });
  });
});
