import { expect } from 'chai';
import { maskedMean, maskedVar, maskedWhiten } from '../../src/rl/whiten.js';

function expectMatrixClose(actual: number[][], expected: number[][], tol = 1e-5): void {
  expect(actual.length).to.equal(expected.length);
  actual.forEach((row, i) => row.forEach((v, t) => expect(v, `[${i}][${t}]`).to.be.closeTo(expected[i][t], tol)));
}

describe('rl/whiten', () => {
  // Masked-in entries: 1, 2, 3, 4 (the 100 and the 0 are masked out).
  const values = [
    [1, 2, 3],
    [4, 100, 0],
  ];
  const mask = [
    [1, 1, 1],
    [1, 0, 0],
  ];

  it('maskedMean ignores masked entries (10 / 4 = 2.5)', () => {
    expect(maskedMean(values, mask)).to.be.closeTo(2.5, 1e-7);
  });

  it('maskedMean of an all-zero mask is 0 (sum / (0 + 1e-8))', () => {
    expect(
      maskedMean(values, [
        [0, 0, 0],
        [0, 0, 0],
      ]),
    ).to.equal(0);
  });

  it('maskedMean skips NaN under a zero mask', () => {
    expect(maskedMean([[1, NaN]], [[1, 0]])).to.be.closeTo(1, 1e-7);
  });

  it('maskedVar is unbiased by default', () => {
    // deviations −1.5, −0.5, 0.5, 1.5 → squares sum 5; biased 5/4 = 1.25; unbiased 5/3.
    expect(maskedVar(values, mask)).to.be.closeTo(5 / 3, 1e-7);
    expect(maskedVar(values, mask, false)).to.be.closeTo(1.25, 1e-7);
  });

  it('maskedVar throws for 0 or 1 masked entries, like verl', () => {
    expect(() =>
      maskedVar(values, [
        [0, 0, 0],
        [0, 0, 0],
      ]),
    ).to.throw(/at least one/);
    expect(() =>
      maskedVar(values, [
        [1, 0, 0],
        [0, 0, 0],
      ]),
    ).to.throw(/divides by zero/);
  });

  it('maskedWhiten applies (v − 2.5)/sqrt(5/3 + 1e-8) everywhere, masked or not', () => {
    // sqrt(5/3) = 1.290994; e.g. (1 − 2.5)/1.290994 = −1.161895, (100 − 2.5)/1.290994 = 75.523175
    expectMatrixClose(maskedWhiten(values, mask), [
      [-1.161895, -0.387298, 0.387298],
      [1.161895, 75.523175, -1.936492],
    ]);
  });

  it('maskedWhiten with shiftMean=false adds the mean back (+2.5)', () => {
    expectMatrixClose(maskedWhiten(values, mask, false), [
      [1.338105, 2.112702, 2.887298],
      [3.661895, 78.023175, 0.563508],
    ]);
  });

  it('rejects mismatched shapes', () => {
    expect(() => maskedMean([[1, 2]], [[1]])).to.throw(/length/);
  });
});
