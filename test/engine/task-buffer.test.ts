import { expect } from 'chai';
import { TaskBuffer } from '../../src/engine/task-buffer.js';

const entry = (prompt: string, p = 0.5, iteration = 1) => ({
  task: { id: prompt, family: 'arithmetic', prompt, answer: '1' },
  p,
  iteration,
});

describe('memory/TaskBuffer', () => {
  it('keeps the newest `size` tasks and forgets the oldest, prompts included', () => {
    const b = new TaskBuffer(2);
    b.add(entry('1+1='));
    b.add(entry('2+2='));
    b.add(entry('3+3='));
    expect(b.length).to.equal(2);
    expect(b.has('1+1=')).to.equal(false);
    expect(b.has('3+3=')).to.equal(true);
    expect(b.entries().map((e) => e.task.prompt)).to.deep.equal(['2+2=', '3+3=']);
  });

  it('a prompt stays known while any copy of it is buffered', () => {
    const b = new TaskBuffer(2);
    b.add(entry('1+1='));
    b.add(entry('1+1='));
    b.add(entry('2+2='));
    expect(b.has('1+1=')).to.equal(true);
    b.add(entry('3+3='));
    expect(b.has('1+1=')).to.equal(false);
  });

  it('samples distinct tasks reproducibly and round-trips through JSON', () => {
    const b = new TaskBuffer(10);
    for (let i = 0; i < 10; i++) b.add(entry(`${i}+0=`, i / 10, i));
    const s = b.sample(4, 7).map((e) => e.task.prompt);
    expect(new Set(s).size).to.equal(4);
    expect(b.sample(4, 7).map((e) => e.task.prompt)).to.deep.equal(s);
    const again = TaskBuffer.from(10, JSON.parse(JSON.stringify(b.entries())));
    expect(again.sample(4, 7).map((e) => e.task.prompt)).to.deep.equal(s);
    expect(b.sample(20, 1)).to.have.length(10);
  });
});
