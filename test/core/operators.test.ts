import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { toEpisode } from '../../src/core/operators/to-episode.js';
import type { Task, Turn } from '../../src/core/types.js';

const task: Task = { id: 't1', family: 'arithmetic', prompt: '1+1=', answer: '2' };
const turn = (text: string): Turn => ({
  index: 0,
  role: 'solver',
  model: 'm',
  prompt: [1],
  completion: [2],
  logProbs: [-1],
  entropy: [0.5],
  selfCertainty: [0.2],
  text,
  action: { valid: true, value: text },
});

describe('arena operators', () => {
  it('toEpisode emits one numbered episode when the turns complete (marbles)', () => {
    const scheduler = new TestScheduler((a, b) => {
      expect(a).to.deep.equal(b);
    });
    scheduler.run(({ cold, expectObservable }) => {
      const turns = cold('-a--b-|', { a: turn('x'), b: turn('y') });
      const episode = {
        id: 'e',
        group: 't1',
        task,
        turns: [
          { ...turn('x'), index: 0 },
          { ...turn('y'), index: 1 },
        ],
      };
      expectObservable(turns.pipe(toEpisode('e', 't1', task))).toBe('------(e|)', { e: episode });
    });
  });

  it('toEpisode passes an arena error through instead of emitting a partial episode', () => {
    const scheduler = new TestScheduler((a, b) => {
      expect(a).to.deep.equal(b);
    });
    scheduler.run(({ cold, expectObservable }) => {
      const turns = cold('-a-#', { a: turn('x') }, new Error('boom'));
      expectObservable(turns.pipe(toEpisode('e', 't1', task))).toBe('---#', undefined, new Error('boom'));
    });
  });
});
