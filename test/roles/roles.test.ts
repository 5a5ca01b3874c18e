import { expect } from 'chai';
import { ROLE_KINDS } from '../../src/registry.js';
import { CriticRole, JudgeRole, MemoryManagerRole, ProposerRole, SneakyRole, SolverRole } from '../../roles/index.js';
import type { Task } from '../../src/core/types.js';

const task: Task = { id: 't', family: 'arithmetic', prompt: '2+3=', answer: '5' };
const digits = (s: string) =>
  /^\d+$/.test(s.trim()) ? { valid: true, value: s.trim() } : { valid: false, value: null, error: 'not digits' };

describe('roles', () => {
  it('the solver shows the task prompt and parses with the task family', () => {
    const r = new SolverRole(digits);
    expect(r.render({ task })).to.equal('2+3=');
    expect(r.parse(' 5')).to.deep.equal({ valid: true, value: '5' });
    expect(r.parse('5+0').valid).to.equal(false);
  });

  it('every other role parses its own format and calls anything else invalid', () => {
    const o = { task, answer: '5', answers: ['5', '6'], memory: ['a', 'b'] };
    expect(new ProposerRole().parse('7*8=').value).to.equal('7*8=');
    expect(new ProposerRole().parse('7*8').valid).to.equal(false);
    expect(new CriticRole().render(o)).to.equal('2+3=5?');
    expect(new CriticRole().parse('y').valid).to.equal(true);
    expect(new CriticRole().parse('maybe').error).to.match(/'y' or 'n'/);
    // shown working: it names the first wrong step, 0 for none, after any working of its own
    const worked = { task: { ...task, prompt: '1+2+3=' }, working: '1+2=3,3+3=7', steps: 2 };
    expect(new CriticRole().render(worked)).to.equal('1+2+3=1+2=3,3+3=7?');
    expect(new CriticRole().parse('6:2', worked).value).to.equal('2');
    expect(new CriticRole().parse('3', worked).error).to.match(/0 \(none\) to 2/);
    expect(new CriticRole().parse('y', worked).valid).to.equal(false);
    // the sneaky generator writes a solver's working, with the solver's token
    const sneaky = new SneakyRole((out) =>
      out.includes('=') ? { valid: true, value: 'x' } : { valid: false, value: null, error: 'no working' },
    );
    expect([sneaky.kind, sneaky.token, sneaky.render(worked)]).to.deep.equal(['sneaky', 'solver', '1+2+3=']);
    expect(sneaky.parse(' 1+2=4,4+3=7 ').value).to.equal('1+2=4,4+3=7');
    expect(sneaky.parse('7').error).to.equal('no working');
    expect(new JudgeRole().render(o)).to.equal('2+3=5|2+3=6>');
    expect(new JudgeRole().parse('B', o).value).to.equal('B');
    expect(new JudgeRole().parse('y', o).valid).to.equal(false);
    // its own working may come first: the verdict is the last character
    expect(new JudgeRole().parse('5A', o).value).to.equal('A');
    expect(new JudgeRole().parse('5', o).error).to.match(/ends in 'A' or 'B'/);
    // one answer: a pointwise verdict, right ('y') or not ('n')
    const one = { task, answers: ['5'] };
    expect(new JudgeRole().render(one)).to.equal('2+3=5?');
    expect(new JudgeRole().parse('n', one).value).to.equal('n');
    expect(new JudgeRole().parse('A', one).error).to.match(/'y' or 'n'/);
    const mem = new MemoryManagerRole();
    expect(mem.render(o)).to.equal('0:a;1:b|2+3=>');
    expect(mem.parse('UPDATE 1 c', o).valid).to.equal(true);
    expect(mem.parse('DELETE 2', o).error).to.match(/index below 2/);
    expect(mem.parse('ADD', o).valid).to.equal(false);
    expect(mem.parse('NOOP 1', o).valid).to.equal(false);
  });

  it('the planner names two memory entries by their numbers, with the proposer token', () => {
    const planner = ROLE_KINDS.planner(digits);
    const task = { id: 't', family: 'arithmetic', prompt: '12+5+30=' };
    // the memory is numbered: the query's numbers (before any step), then each step done
    expect(planner.render({ task })).to.equal('0:12|1:5|2:30>');
    expect(planner.render({ task, memory: ['12', '5', '30', '0+2=42'] })).to.equal('0:12|1:5|2:30|3:0+2=42>');
    expect(planner.parse(' 3+1 ', { task })).to.deep.equal({ valid: true, value: '3+1' });
    for (const bad of ['4+', '4+2+1', '4-2', '', '123+1', '12+5=17'])
      expect(planner.parse(bad, { task }).valid, bad).to.equal(false);
    expect(planner.token).to.equal('proposer');
  });

  it('knows every role kind by name', () => {
    expect(Object.keys(ROLE_KINDS).sort()).to.deep.equal([
      'answer',
      'critic',
      'judge',
      'memory',
      'observer',
      'planner',
      'player',
      'proposer',
      'sneaky',
      'solver',
    ]);
    for (const make of Object.values(ROLE_KINDS)) expect(make(digits).kind).to.be.a('string');
  });
});
