import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rewardCommand } from '../../src/cli/reward.js';
import { taskFamily } from '../../src/registry.js';

describe('cli/reward', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-reward-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, rows: unknown[]) => {
    const path = join(dir, name);
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return path;
  };

  it("scores each row with the family's verifier and says what answer it read", () => {
    const path = file('math.jsonl', [
      { completion: 'so \\boxed{\\frac{1}{2}}', answer: '0.5' },
      { completion: 'She has 36 - 5 = 31 left.\n#### 31', answer: 31 },
      { completion: 'I give up', answer: '3' },
      { completion: '\\boxed{7}', answer: '8' },
    ]);
    expect(rewardCommand(path, taskFamily('math'))).to.deep.equal([
      { line: 1, reward: 1, answer: '\\frac{1}{2}' },
      { line: 2, reward: 1, answer: '31' },
      { line: 3, reward: 0, answer: null },
      { line: 4, reward: 0, answer: '7' },
    ]);
  });

  it('refuses a bad row, naming the file, the line and the field, before scoring any', () => {
    const path = file('bad.jsonl', [{ completion: '1', answer: '1' }, { answer: '2' }]);
    expect(() => rewardCommand(path, taskFamily('math'))).to.throw(`${path}:2: field 'completion': must be a string`);
    const noAnswer = file('no-answer.jsonl', [{ completion: '1' }]);
    expect(() => rewardCommand(noAnswer, taskFamily('math'))).to.throw(`${noAnswer}:1: field 'answer'`);
  });
});
