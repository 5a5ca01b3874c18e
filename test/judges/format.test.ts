import { expect } from 'chai';
import { FormatJudge } from '../../judges/index.js';
import { makeJudge } from '../../src/registry.js';
import { episode, solverGroup } from './fixtures.js';

describe('judges/format', () => {
  const texts = [
    '<think>\n3*5 is 15, plus 7\n</think>\n<answer>3*5+7</answer>', // the shape
    '<think>a</think><answer>b</answer>\n', // no whitespace between, a trailing newline
    '<think>a</think>', // no answer
    '<answer>b</answer>', // no think
    '<think>a</think><answer>b</answer> and more', // text after the answer
    '<think>a<think>b</think><answer>c</answer>', // a second <think>
    '<think>a</think><answer>b</answer><answer>c</answer>', // two answers
    'so <think>a</think><answer>b</answer>', // text before
  ];

  it("'think-answer' (TRL's GRPO example): one <think> block, then one <answer> block, nothing else", () => {
    const judge = new FormatJudge();
    expect(judge.score(solverGroup(texts.map((text) => ({ text }))))).to.deep.equal([
      [1],
      [1],
      [0],
      [0],
      [0],
      [0],
      [0],
      [0],
    ]);
  });

  it("'think' (TRL's think_format_reward): opens with <think>, closes it, anything after", () => {
    const judge = makeJudge('format', { format: 'think', correct: 0.5, wrong: -0.5 });
    expect(judge.score(solverGroup(texts.map((text) => ({ text }))))).to.deep.equal([
      [0.5],
      [0.5],
      [0.5],
      [-0.5],
      [0.5],
      [-0.5],
      [0.5],
      [-0.5],
    ]);
  });

  it('rewards only its roles; a misspelt option names the known ones', () => {
    const judge = new FormatJudge({ role: 'solver' });
    expect(judge.score([episode([{ text: texts[0] }, { text: texts[0], role: 'proposer' }])])).to.deep.equal([
      [1, null],
    ]);
    expect(() => makeJudge('format', { formats: 'think' })).to.throw(/formats/);
  });
});
