import { expect } from 'chai';
import { OpponentPool, eloRatings } from '../../src/games/pool.js';

const counts = (pool: OpponentPool<string>, n: number) => {
  const c: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const name = pool.sample();
    c[name] = (c[name] ?? 0) + 1;
  }
  return c;
};

describe('games/OpponentPool', () => {
  const filled = (sampling: 'latest' | 'uniform' | 'prioritised', capacity = 5) => {
    const pool = new OpponentPool<string>({ capacity, sampling, seed: 7 });
    for (const n of ['a', 'b', 'c']) pool.add(n, `snapshot ${n}`);
    return pool;
  };

  it('latest draws the newest snapshot only; uniform each about equally', () => {
    expect(counts(filled('latest'), 200)).to.deep.equal({ c: 200 });
    const c = counts(filled('uniform'), 3000);
    for (const n of ['a', 'b', 'c']) expect(c[n], n).to.be.within(900, 1100);
  });

  it('prioritised follows (1 - win rate)^2: the snapshots the learner loses to come up most', () => {
    const pool = filled('prioritised');
    for (let i = 0; i < 9; i++) {
      pool.record('a', 1);
      pool.record('b', 0.5);
      pool.record('c', 0);
    }
    const w = [9.5 / 10, 5 / 10, 0.5 / 10]; // (score + 1/2) / (games + 1)
    expect(pool.winRates()).to.deep.equal(w);
    const raw = w.map((x) => (1 - x) ** 2);
    const total = raw.reduce((a, b) => a + b, 0);
    pool.probabilities().forEach((p, i) => expect(p).to.be.closeTo(raw[i] / total, 1e-12));
    const c = counts(pool, 4000);
    expect(c.c).to.be.above(c.b);
    expect(c.b).to.be.above(c.a ?? 0);
    expect(c.c / 4000).to.be.closeTo(raw[2] / total, 0.03);
  });

  it('a full pool pushes out its oldest snapshot and hands it back', () => {
    const pool = filled('uniform', 3);
    expect(pool.add('d', 'snapshot d')).to.equal('snapshot a');
    expect(pool.names()).to.deep.equal(['b', 'c', 'd']);
    expect(pool.snapshot('d')).to.equal('snapshot d');
  });

  it('state and restore continue the same draws with the same records', () => {
    const pool = filled('prioritised');
    pool.record('b', 0);
    pool.sample();
    const copy = OpponentPool.restore(
      { capacity: 5, sampling: 'prioritised' },
      JSON.parse(JSON.stringify(pool.state())),
      (n) => `snapshot ${n}`,
    );
    expect(copy.winRates()).to.deep.equal(pool.winRates());
    expect(Array.from({ length: 20 }, () => copy.sample())).to.deep.equal(
      Array.from({ length: 20 }, () => pool.sample()),
    );
  });

  it('refuses bad settings, names and scores', () => {
    expect(() => new OpponentPool({ capacity: 0, sampling: 'latest', seed: 1 })).to.throw(/capacity/);
    expect(() => new OpponentPool({ capacity: 2, sampling: 'best' as 'latest', seed: 1 })).to.throw(
      /latest, uniform, prioritised/,
    );
    const pool = filled('latest');
    expect(() => pool.add('a', 'again')).to.throw(/already held/);
    expect(() => pool.record('zz', 1)).to.throw(/no snapshot 'zz'/);
    expect(() => pool.record('a', 2)).to.throw(/in \[0, 1\]/);
    expect(() => new OpponentPool<string>({ capacity: 2, sampling: 'uniform', seed: 1 }).sample()).to.throw(/empty/);
  });
});

describe('games/eloRatings (Bradley-Terry fit on the Elo scale)', () => {
  const games = (a: string, b: string, wins: number, of: number) =>
    Array.from({ length: of }, (_, i) => ({ a, b, scoreA: i < wins ? 1 : 0 }));

  it('3:1 odds are a gap of 400 log10(3) = 190.8 points; the anchor keeps its rating', () => {
    const r = eloRatings(games('a', 'b', 300, 400), 'b');
    expect(r.b).to.equal(1000);
    expect(r.a - r.b).to.be.closeTo(400 * Math.log10(3), 1.5);
  });

  it('orders a chain of players and counts draws as half a win each', () => {
    const r = eloRatings([...games('a', 'b', 150, 200), ...games('b', 'c', 150, 200)], 'a', 1500);
    expect(r.a).to.equal(1500);
    expect(r.a).to.be.above(r.b);
    expect(r.b).to.be.above(r.c);
    expect(r.a - r.b).to.be.closeTo(r.b - r.c, 1);
    const drawn = eloRatings(
      Array.from({ length: 50 }, () => ({ a: 'x', b: 'y', scoreA: 0.5 })),
      'x',
    );
    expect(drawn.y).to.be.closeTo(1000, 1e-6);
  });

  it('an unbeaten player gets a finite rating; an anchor without games is refused', () => {
    const r = eloRatings(games('a', 'b', 20, 20), 'b');
    expect(Number.isFinite(r.a)).to.equal(true);
    expect(r.a - r.b).to.be.above(400);
    expect(() => eloRatings(games('a', 'b', 1, 2), 'c')).to.throw(/anchor 'c' played no game/);
  });
});
