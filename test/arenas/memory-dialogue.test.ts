import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { MemoryDialogueArena } from '../../arenas/memory-dialogue.js';
import type { ArenaContext, EpisodeEnd } from '../../src/core/arena.js';
import { ruleContext } from '../../arenas/memory-rules.js';
import { comparisonGroup } from '../../src/core/groups.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { dialogue } from '../../src/tasks/dialogue.js';
import { OutcomeJudge } from '../../judges/outcome.js';

// sessions split by '--', questions last; answers joined by '|'
const TASK: Task = {
  id: 'd0',
  family: 'dialogue',
  prompt:
    'ann city rome\nhi bob\n--\nbob pet cat\nann city oslo\n--\nbob pet -\nann pet emu\nann city?\nbob pet?\nann pet?',
  answer: 'oslo|unknown|emu',
};

const play = async (arena: MemoryDialogueArena, ctx: ArenaContext) => {
  const out = await firstValueFrom(arena.play(TASK, ctx).pipe(toArray()));
  const end = out.find((x): x is EpisodeEnd => 'end' in x)!;
  const turns = out.filter((x): x is Turn => 'role' in x);
  return { end, turns, episode: { id: 'e0', group: 'g', task: TASK, turns, outcome: end.outcome } as Episode };
};

/** The rule policies, except that the manager writes `script[n]` at its n-th call when given. */
const scripted = (script: Record<number, string>): ArenaContext => {
  let n = 0;
  return {
    async act(role, o, options) {
      const turn = await ruleContext.act(role, o, options);
      if (role !== 'memory' || script[n++] === undefined) return turn;
      const text = script[n - 1];
      return {
        ...turn,
        text,
        action: (await import('../../roles/memory.js')).MemoryManagerRole.prototype.parse.call({}, text, o),
      };
    },
  };
};

describe('arena memory-dialogue', () => {
  it('the rule manager and reader answer everything; the outcome is the QA accuracy of both roles', async () => {
    const { end, turns } = await play(new MemoryDialogueArena({}, dialogue as never), ruleContext);
    expect(turns.filter((t) => t.role === 'memory').map((t) => t.text)).to.deep.equal([
      'ADD ann city rome',
      'NOOP',
      'ADD bob pet cat',
      'UPDATE 0 ann city oslo',
      'DELETE 0',
      'ADD ann pet emu',
    ]);
    expect(turns.filter((t) => t.role === 'answer').map((t) => t.action.value)).to.deep.equal([
      'oslo',
      'unknown',
      'emu',
    ]);
    expect(end.outcome).to.deep.equal({ memory: 1, answer: 1 });
    expect(end.info).to.deep.equal({ bank_size: 2, bank: ['ann city oslo', 'ann pet emu'] });
  });

  it('baselines: keep-last drops the oldest, always-add stops when full, none remembers nothing', async () => {
    const acc = async (manager: string) =>
      (await play(new MemoryDialogueArena({ manager, maxEntries: 2 }, dialogue as never), ruleContext)).end.outcome!
        .answer;
    // keep-last keeps 'bob pet -' and 'ann pet emu'; always-add keeps 'ann city rome' and 'hi bob' (right only on the unknown)
    expect(await acc('keep-last')).to.be.closeTo(2 / 3, 1e-12);
    expect(await acc('always-add')).to.be.closeTo(1 / 3, 1e-12);
    expect(await acc('none')).to.be.closeTo(1 / 3, 1e-12);
    // the rule manager as a baseline edits the bank as a model playing the rules does, unseen by training
    const ruled = await play(
      new MemoryDialogueArena({ manager: 'rule', maxEntries: 2 }, dialogue as never),
      ruleContext,
    );
    const modeled = await play(new MemoryDialogueArena({ maxEntries: 2 }, dialogue as never), ruleContext);
    expect(ruled.end.info).to.deep.equal(modeled.end.info);
    expect(ruled.end.outcome).to.deep.equal({ answer: modeled.end.outcome!.answer });
    expect(ruled.turns.filter((t) => t.role === 'memory')).to.have.length(0);
    expect(new MemoryDialogueArena({ manager: 'none' }, dialogue as never).roles).to.deep.equal({ answer: 'answer' });
  });

  it('an invalid or refused operation changes nothing and has the invalid outcome; the outcome judge prefers it', async () => {
    // call 2 deletes an entry it was never shown; call 3 adds to a full bank of one
    const arena = new MemoryDialogueArena({ maxEntries: 1, invalid: -2 }, dialogue as never);
    const { turns, episode } = await play(arena, scripted({ 1: 'DELETE 0' }));
    const ops = turns.filter((t) => t.role === 'memory');
    expect(ops[1].action.valid).to.equal(false);
    expect(ops[2].text).to.equal('NOOP'); // the rule manager lets a new fact go when full
    const rewards = new OutcomeJudge({ role: 'memory' })
      .score([episode])[0]
      .filter((r, i) => episode.turns[i].role === 'memory');
    expect(rewards[1]).to.equal(-2);
    expect(rewards[0]).to.equal(episode.outcome!.memory);
    // an entry longer than maxEntryChars is refused by the bank: invalid, the bank unchanged
    const long = await play(
      new MemoryDialogueArena({ maxEntryChars: 12 }, dialogue as never),
      scripted({ 0: 'ADD ann city rome and more' }),
    );
    expect(long.turns[0].action.error).to.match(/exceeds maxEntryChars 12/);
    expect(long.turns[0].outcome).to.equal(-1);
  });

  it('re-rollouts: G operations from one state form one group, each scored by probes of its own fork', async () => {
    // at step 4 ('ann city oslo') the first alternative is the rule's UPDATE, the second a NOOP that leaves rome
    const arena = new MemoryDialogueArena({ rerollouts: 2, probes: 0 }, dialogue as never);
    const { turns, episode } = await play(arena, scripted({ 7: 'NOOP' }));
    const step4 = turns.filter((t) => t.role === 'memory' && t.compare === 'episode:s4');
    expect(step4.map((t) => t.text)).to.deep.equal(['UPDATE 0 ann city oslo', 'NOOP']);
    expect(step4.map((t) => t.outcome)).to.deep.equal([1, 0]);
    expect(new Set(step4.map((t) => comparisonGroup(episode, t)))).to.deep.equal(new Set(['ep:e0:s4/memory']));
    expect(
      comparisonGroup(
        episode,
        turns.find((t) => t.compare === 'episode:s5')!,
      ),
    ).to.equal('ep:e0:s5/memory');
    // the probe of the NOOP fork asked 'ann city?' and read the stale rome
    const probes = turns.filter((t) => t.task?.id.startsWith('d0/s4/'));
    expect(probes.map((t) => t.action.value)).to.deep.equal(['oslo', 'rome']);
    // small talk has no fact to probe and no probes were asked for: no outcome of its own
    expect(turns.filter((t) => t.compare === 'episode:s2').every((t) => t.outcome === undefined)).to.equal(true);
    expect(
      turns.filter((t) => t.role === 'answer' && /\/q\d$/.test(t.task!.id)).map((t) => t.action.value),
    ).to.deep.equal(['oslo', 'unknown', 'emu']);
  });

  it('checks its options and its task family', () => {
    expect(() => new MemoryDialogueArena({ rerollouts: 1 }, dialogue as never)).to.throw(
      /rerollouts.*0 \(off\) or an integer >= 2/,
    );
    expect(() => new MemoryDialogueArena({ manager: 'oracle' }, dialogue as never)).to.throw(/manager/);
    expect(() => new MemoryDialogueArena({}, arithmetic as never)).to.throw(/does not serve task family 'arithmetic'/);
  });
});
