import { expect } from 'chai';
import { firstValueFrom, toArray } from 'rxjs';
import { flowMetrics, FlowArena, rightSteps } from '../../arenas/flow.js';
import { randomStep } from '../../arenas/flow-corpus.js';
import type { ArenaContext, EpisodeEnd } from '../../src/core/arena.js';
import type { Observation } from '../../src/core/role.js';
import type { Episode, Task, Turn } from '../../src/core/types.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { OutcomeJudge } from '../../judges/outcome.js';
import { PlannerRole } from '../../roles/planner.js';
import { scoreEpisodes, toSamples } from '../../src/engine/rewards.js';
import type { Plan } from '../../src/engine/plan.js';
import type { ExperimentConfig } from '../../src/config/schema.js';
import { grpoOutcomeAdvantage } from '../../src/rl/advantages.js';
import { Rng } from '../../src/util/rng.js';
import { scriptedTurn } from './scripted.js';

const TASK: Task = { id: 't0', family: 'arithmetic', prompt: '12+34+56=', answer: '102' };
const planner = new PlannerRole();

/** A planner that writes `script[n]` at its n-th turn, recording what it was shown. */
function scripted(script: string[], shown: Observation[] = []): ArenaContext {
  let n = 0;
  return {
    act(role, o, options) {
      shown.push(o);
      const text = script[n++] ?? 'x';
      return Promise.resolve({ ...scriptedTurn(role, text, planner.parse(text)), compare: options?.compare });
    },
  };
}

async function play(script: string[], options: object = {}, id = 'e0', shown: Observation[] = []) {
  const out = await firstValueFrom(
    new FlowArena(options, arithmetic as never).play(TASK, scripted(script, shown)).pipe(toArray()),
  );
  const end = out.find((x): x is EpisodeEnd => 'end' in x)!;
  const turns = out.filter((x): x is Turn => 'role' in x);
  return { end, episode: { id, group: 'g', task: TASK, turns, outcome: end.outcome, info: end.info } as Episode };
}

const plan = { judges: [{ judge: new OutcomeJudge({ role: 'planner' }), weight: 1 }] } as unknown as Plan;
const trainer = { advantage: 'grpo', critic: { decay: 0.9 } } as unknown as ExperimentConfig['trainer'];

describe('arena flow', () => {
  it('the memory evolves turn by turn: each step the executor ran is shown to the next planner turn', async () => {
    const shown: Observation[] = [];
    const { end } = await play(['0+2', '3+1'], {}, 'e0', shown);
    expect(shown.map((o) => o.memory)).to.deep.equal([
      ['12', '34', '56'],
      ['12', '34', '56', '0+2=68'],
    ]);
    expect(shown.map((o) => planner.render(o))).to.deep.equal(['0:12|1:34|2:56>', '0:12|1:34|2:56|3:0+2=68>']);
    expect(end.info?.memory).to.deep.equal(['12', '34', '56', '0+2=68', '3+1=102']);
    expect([end.info?.answer, end.outcome]).to.deep.equal(['102', { planner: 1 }]);
  });

  it('the executor adds the entries the planner names, right plan or not; the verifier stops at two steps; the generator answers the last', async () => {
    const { end, episode } = await play(['0+0', '3+2', '1+1']);
    expect(episode.turns).to.have.length(2);
    expect([end.info?.memory, end.info?.answer, end.outcome]).to.deep.equal([
      ['12', '34', '56', '0+0=24', '3+2=80'],
      '80',
      { planner: 0 },
    ]);
  });

  it('a step that does not parse or names an entry the memory lacks runs nothing and the flow goes on, up to maxTurns', async () => {
    const { end, episode } = await play(['0+', '3+1', '0+1', '3+2']);
    expect(episode.turns.map((t) => t.action.valid)).to.deep.equal([false, false, true]);
    expect(episode.turns[1].action.error).to.match(/entries 0 to 2, got 3\+1/);
    expect(end.info?.memory).to.deep.equal(['12', '34', '56', '0+1=46']);
    expect(end.outcome).to.deep.equal({ planner: 0 });
    const longer = await play(['0+', '0+1', '3+2'], { maxTurns: 4 });
    expect(longer.end.outcome).to.deep.equal({ planner: 1 });
  });

  it('only the planner is a model: every turn is a planner turn, and only planner samples train', async () => {
    const { episode } = await play(['0+2', '3+1']);
    expect(new FlowArena({}, arithmetic as never).roles).to.deep.equal({ planner: 'planner' });
    expect(episode.turns.map((t) => t.role)).to.deep.equal(['planner', 'planner']);
    const wrong = await play(['0+0', '3+2'], {}, 'e1');
    const { samples } = toSamples(await scoreEpisodes(plan, [episode, wrong.episode]), trainer);
    expect(samples.map((s) => s.role)).to.deep.equal(['planner', 'planner', 'planner', 'planner']);
  });

  it("the broadcast outcome reaches every planner turn, with the trajectory's group advantage (each trajectory counted once)", async () => {
    const right = await play(['0+2', '3+1'], {}, 'e0');
    const wrong = await play(['0+0', '3+2'], {}, 'e1');
    const long = await play(['x', '1+1', '3+0'], {}, 'e2'); // three turns, wrong
    const scored = await scoreEpisodes(plan, [right.episode, wrong.episode, long.episode]);
    expect(scored.map((s) => s.reward)).to.deep.equal([1, 1, 0, 0, 0, 0, 0]);
    const { credited } = toSamples(scored, trainer);
    // A = (R − mean) / (std + 1e-6) over the 3 trajectories' outcomes [1, 0, 0]: mean 1/3, unbiased std 1/√3
    const std = Math.sqrt(((2 / 3) ** 2 + 2 * (1 / 3) ** 2) / 2);
    const expected = [2 / 3, 2 / 3, -1 / 3, -1 / 3, -1 / 3, -1 / 3, -1 / 3].map((d) => d / (std + 1e-6));
    credited.forEach((c, i) => expect(c.advantage).to.be.closeTo(expected[i], 1e-9));
    // counted per turn instead (7 rows: mean 2/7) the advantages would differ
    const perTurn = grpoOutcomeAdvantage(
      scored.map((s) => [s.reward]),
      scored.map(() => [1]),
      scored.map(() => 'g'),
    ).advantages.map((r) => r[0]);
    expect(perTurn[0]).to.not.be.closeTo(expected[0], 0.1);
  });

  it('credit final (the ablation): only the final planner turn is paid; the judge abstains on the others', async () => {
    const { episode } = await play(['0+2', '3+1'], { credit: 'final' });
    expect(episode.turns.map((t) => t.outcome)).to.deep.equal([null, undefined]);
    expect(new OutcomeJudge({ role: 'planner' }).score([episode])).to.deep.equal([[null, 1]]);
    const wrong = await play(['0+0', '3+2'], { credit: 'final' }, 'e1');
    const { samples, credited } = toSamples(await scoreEpisodes(plan, [episode, wrong.episode]), trainer);
    expect(samples.map((s) => s.prompt)).to.deep.equal([episode.turns[1].prompt, wrong.episode.turns[1].prompt]);
    expect(credited.map((c) => [c.turn, c.advantage > 0])).to.deep.equal([
      [episode.turns[1], true],
      [wrong.episode.turns[1], false],
    ]);
  });

  it('grpo units: the rows of one unit must share their score', () => {
    expect(() => grpoOutcomeAdvantage([[1], [0]], [[1], [1]], ['g', 'g'], { units: ['u', 'u'] })).to.throw(
      /one outcome per unit/,
    );
  });

  it("the planner base's corpus writes random steps of two entries the memory holds", () => {
    const rng = new Rng(3);
    const o = { task: TASK, memory: ['12', '34', '56', '0+2=68'] };
    const steps = Array.from({ length: 200 }, () => randomStep(o, rng));
    expect(steps.every((s) => s.split('+').every((x) => ['0', '1', '2', '3'].includes(x)))).to.equal(true);
    expect(new Set(steps).size).to.equal(16);
  });

  it('a step is right when it names two different entries no step has used; the metrics count first and second steps', async () => {
    expect(rightSteps(['12', '34', '56', '0+2=68', '3+1=102'], 3)).to.deep.equal([true, true]);
    expect(rightSteps(['12', '34', '56', '0+0=24', '3+1=58'], 3)).to.deep.equal([false, true]);
    expect(rightSteps(['12', '34', '56', '0+2=68', '3+0=80'], 3)).to.deep.equal([true, false]);
    const flows = await Promise.all(
      [
        ['0+2', '3+1'],
        ['1+2', '3+2'],
        ['0+0', '3+1'],
        ['2+1', '0+3'],
      ].map((s, i) => play(s, {}, `e${i}`)),
    );
    expect(flowMetrics(flows.map((f) => f.episode))).to.deep.equal({
      'flow/accuracy': 0.5,
      'flow/valid_rate': 1,
      'flow/turns': 2,
      'flow/first_step': 0.75,
      'flow/second_step': 2 / 3,
    });
  });

  it('refuses a family that is not arithmetic, and a task that is not a sum', async () => {
    expect(() => new FlowArena({}, { name: 'strings' } as never)).to.throw(/needs sums/);
    const arena = new FlowArena({}, arithmetic as never);
    const bad = { ...TASK, prompt: '12*3=' };
    await firstValueFrom(arena.play(bad, scripted([])).pipe(toArray())).then(
      () => expect.fail('played'),
      (e: Error) => expect(e.message).to.match(/not a sum/),
    );
  });
});
