import { expect } from 'chai';
import { AnswerRole, MemoryManagerRole, memoryOp } from '../../roles/memory.js';

const task = { id: 't', family: 'dialogue', prompt: '' };

describe('roles/memory', () => {
  it('the manager sees the retrieved entries and the turn; ADD on a full bank and malformed operations are invalid', () => {
    const o = { task, memory: ['ann city rome', 'bob pet cat'], fact: 'ann city oslo', full: false };
    const mem = new MemoryManagerRole();
    expect(mem.render(o)).to.equal('0:ann city rome;1:bob pet cat|ann city oslo>');
    expect(mem.parse('UPDATE 0 ann city oslo', o).value).to.equal('UPDATE 0 ann city oslo');
    expect(mem.parse('ADD ann city oslo', o).valid).to.equal(true);
    expect(mem.parse('ADD ann city oslo', { ...o, full: true }).error).to.match(/full bank/);
    expect(mem.parse('DELETE 1 x', o).error).to.match(/only an index/);
    expect(mem.parse('DELETE 2', o).error).to.match(/index below 2/);
    expect(mem.parse('delete 0', o).valid).to.equal(false);
  });

  it('maps positions of the shown entries to their ids; ADD keeps a leading number as text', () => {
    expect(memoryOp('UPDATE 1 ann city oslo', ['m4', 'm9'])).to.deep.equal({
      op: 'UPDATE',
      id: 'm9',
      text: 'ann city oslo',
    });
    expect(memoryOp('DELETE 0', ['m4'])).to.deep.equal({ op: 'DELETE', id: 'm4' });
    expect(memoryOp('ADD 3 cats', [])).to.deep.equal({ op: 'ADD', text: '3 cats' });
    expect(memoryOp('NOOP', [])).to.deep.equal({ op: 'NOOP' });
    expect(() => memoryOp('DELETE 3', ['m0'])).to.throw(/position 3/);
  });

  it('the answer agent selects an entry (or none) and answers; its value is the answer alone', () => {
    const o = { task, memory: ['ann city oslo'], question: 'ann city?' };
    const a = new AnswerRole();
    expect(a.token).to.equal('solver');
    expect(a.render(o)).to.equal('0:ann city oslo|ann city?>');
    expect(a.parse('0:oslo', o).value).to.equal('oslo');
    expect(a.parse('-:unknown', o).value).to.equal('unknown');
    expect(a.parse('1:oslo', o).error).to.match(/entry 1, but 1 were shown/);
    expect(a.parse('oslo', o).valid).to.equal(false);
  });
});
