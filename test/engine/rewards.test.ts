import { expect } from 'chai';
import { RoleBaseline } from '../../src/rl/role-baseline.js';
import { MajorityJudge } from '../../judges/majority.js';
import { SolverRole } from '../../src/core/solver.js';
import { VerifierJudge } from '../../judges/verifier.js';
import type { Episode, Task } from '../../src/core/types.js';
import { parseConfig } from '../../src/config/load.js';
import type { Plan } from '../../src/registry.js';
import { rolloutMetrics, scoreEpisodes, toSamples } from '../../src/engine/rewards.js';
import { normalizeThenSum } from '../../src/core/combine.js';
import { arithmetic } from '../../src/tasks/arithmetic.js';
import { tinyConfig } from './fixtures.js';

const task: Task = { id: 't', family: 'arithmetic', prompt: '2+3=', answer: '5' };
function episode(i: number, text: string, length = 2): Episode {
  const action = arithmetic.parseAnswer(text);
  const completion = Array.from({ length }, (_, j) => 9 + j);
  const logProbs = completion.map((_, j) => -1 + 0.5 * j);
  return {
    id: `t#${i}`,
    group: 't',
    task,
    turns: [
      {
        index: 0,
        role: 'solver',
        model: 'main',
        prompt: [1, 4],
        completion,
        logProbs,
        entropy: completion.map(() => 1),
        selfCertainty: length === 2 ? [0.1, 0.3] : completion.map(() => 0.2),
        text,
        action,
      },
    ],
  };
}
const plan = (judges: Plan['judges']): Plan => ({
  arena: undefined as never,
  family: arithmetic as never,
  roles: { solver: new SolverRole((o) => arithmetic.parseAnswer(o)) },
  judges,
  live: {},
  definitions: [],
});
const verify = (t: Task, o: string) => arithmetic.verify(t, o);

describe('rewards to samples', () => {
  const group = [episode(0, '5'), episode(1, '6'), episode(2, '6'), episode(3, 'x')];

  it('combines judges by weight and computes GRPO advantages per group', async () => {
    const p = plan([
      { judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' },
      { judge: new MajorityJudge({}, verify), weight: 0.5, kind: 'majority' },
    ]);
    const scored = await scoreEpisodes(p, group);
    // verifier: [1, 0, 0, 0]; majority label '6': [0, 1, 1, 0] -> combined [1, 0.5, 0.5, 0]
    expect(scored.map((s) => s.reward)).to.deep.equal([1, 0.5, 0.5, 0]);
    const samples = toSamples(scored, parseConfig(tinyConfig('/tmp')).trainer).samples;
    // mean 0.5, unbiased std sqrt(1/6) = 0.4082: advantages (r - 0.5) / (0.4082 + 1e-6)
    const std = Math.sqrt((0.5 ** 2 * 2) / 3);
    expect(samples.map((s) => (s.advantages as number[])[1])).to.deep.equal([
      0.5 / (std + 1e-6),
      0,
      0,
      -0.5 / (std + 1e-6),
    ]);
    samples.forEach((s) => expect(s.oldLogProbs).to.deep.equal([-1, -0.5]));
  });

  it("refuses to train a turn sampled at the arena's temperature (ActOptions.temperature); unpaid, it is dropped", async () => {
    const p = plan([{ judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' }]);
    const greedy = (e: Episode): Episode => ({ ...e, turns: e.turns.map((t) => ({ ...t, temperature: 0 })) });
    let error = '';
    await scoreEpisodes(p, [group[0], greedy(group[1])]).catch((e: Error) => (error = e.message));
    expect(error).to.match(
      /episode t#1 turn 0 \(solver\): sampled at the arena's temperature 0, .* cannot be trained, yet a judge paid it 0/,
    );
    const unlabeled = greedy({ ...group[1], task: { ...task, answer: undefined } });
    expect((await scoreEpisodes(p, [group[0], unlabeled])).map((s) => s.episode.id)).to.deep.equal(['t#0']);
  });

  it("trainer.rewardAggregation normalize-then-sum: TRL's normalize_then_sum of each judge's part, in place of the estimator", async () => {
    const p = plan([
      { judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' },
      { judge: new MajorityJudge({}, verify), weight: 0.5, kind: 'majority' },
    ]);
    const scored = await scoreEpisodes(p, group);
    expect(scored.map((s) => s.parts.rewards)).to.deep.equal([
      [1, 0],
      [0, 1],
      [0, 1],
      [0, 0],
    ]);
    const trainer = parseConfig({
      ...tinyConfig('/tmp'),
      trainer: { rewardAggregation: 'normalize-then-sum' },
    }).trainer;
    const adv = toSamples(scored, trainer).samples.map((s) => (s.advantages as number[])[1]);
    expect(adv).to.deep.equal(
      normalizeThenSum(
        [
          [1, 0],
          [0, 1],
          [0, 1],
          [0, 0],
        ],
        ['t', 't', 't', 't'],
        [1, 0.5],
      ),
    );
    // not the weighted sum's GRPO advantages (1.22 for the right answer): normalised on its own, the verifier's
    // one right answer in four (z = 1.5) outweighs the majority's vote against it (z = -0.87, at weight 0.5): 1.30
    const summed = toSamples(scored, parseConfig(tinyConfig('/tmp')).trainer).samples.map(
      (s) => (s.advantages as number[])[1],
    );
    expect(summed[0]).to.be.closeTo(1.2247, 1e-3);
    expect(adv[0]).to.be.closeTo(1.3008, 1e-3);
    // it forms the advantages itself: another estimator, or a KL penalty in the reward, is refused naming the field
    expect(() =>
      parseConfig({ ...tinyConfig('/tmp'), trainer: { rewardAggregation: 'normalize-then-sum', advantage: 'rloo' } }),
    ).to.throw(/trainer\.advantage: must be grpo with trainer\.rewardAggregation normalize-then-sum/);
    expect(() => parseConfig({ ...tinyConfig('/tmp'), trainer: { rewardAggregation: 'mean' } })).to.throw(
      /rewardAggregation/,
    );
  });

  it("'rae' subtracts each role's moving baseline turn by turn, each read before its own reward folds in (SPIRAL's RAE)", async () => {
    const p = plan([{ judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' }]);
    const scored = await scoreEpisodes(p, group); // rewards [1, 0, 0, 0]
    const trainer = parseConfig({ ...tinyConfig('/tmp'), trainer: { advantage: 'rae', raeDecay: 0.9 } }).trainer;
    const baselines = new RoleBaseline(0.9);
    const first = toSamples(scored, trainer, {}, baselines);
    // b: 0 -> 0.1 (after the 1) -> 0.09 -> 0.081 -> 0.0729
    const expected = [1, -0.1, -0.09, -0.081];
    first.samples.forEach((s, i) => expect((s.advantages as number[])[0]).to.be.closeTo(expected[i], 1e-12));
    expect(first.metrics['rae/solver/baseline']).to.equal(0);
    expect(baselines.baseline('solver')).to.be.closeTo(0.0729, 1e-12);
    // the baseline carries over to the next batch; no division by a spread (unlike GRPO)
    const second = toSamples(scored, trainer, {}, baselines);
    expect((second.samples[0].advantages as number[])[0]).to.be.closeTo(1 - 0.0729, 1e-12);
    expect(() => parseConfig({ ...tinyConfig('/tmp'), trainer: { advantage: 'rae', raeDecay: 1 } })).to.throw(
      /raeDecay/,
    );
  });

  it('gives every completion token its row advantage, whatever the completion lengths', async () => {
    const ragged = [episode(0, '5', 1), episode(1, '6', 3), episode(2, '5', 2), episode(3, '7', 4)];
    const p = plan([{ judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' }]);
    const scored = await scoreEpisodes(p, ragged);
    for (const advantage of ['grpo', 'drgrpo', 'rloo'] as const) {
      const samples = toSamples(scored, parseConfig({ ...tinyConfig('/tmp'), trainer: { advantage } }).trainer).samples;
      samples.forEach((s, i) => {
        const a = s.advantages as number[];
        expect(a, `${advantage} row ${i}`).to.have.length(ragged[i].turns[0].completion.length);
        a.forEach((x) => expect(x).to.equal(a[0]));
      });
      // rewards [1, 0, 1, 0]: the right answers get the same positive advantage, the wrong ones its negative
      const first = samples.map((s) => (s.advantages as number[])[0]);
      expect(first[0]).to.be.greaterThan(0);
      expect(first[0]).to.equal(first[2]);
      expect(first[1]).to.equal(-first[0]);
    }
    // REINFORCE++ whitens over tokens: longer right answers weigh in, so only signs are fixed
    const rpp = toSamples(
      scored,
      parseConfig({ ...tinyConfig('/tmp'), trainer: { advantage: 'reinforce++' } }).trainer,
    ).samples;
    rpp.forEach((s, i) => expect(s.advantages as number[]).to.have.length(ragged[i].turns[0].completion.length));
    expect((rpp[0].advantages as number[])[0]).to.be.greaterThan((rpp[1].advantages as number[])[0]);
  });

  it('reports TTRL label and reward accuracy against the hidden answer', async () => {
    const p = plan([{ judge: new MajorityJudge({}, verify), weight: 1, kind: 'majority' }]);
    const m = rolloutMetrics(p, group, await scoreEpisodes(p, group));
    expect(m['ttrl/label_accuracy']).to.equal(0); // the majority said 6
    // majority rewards [0,1,1,0] vs true [1,0,0,0]: only the invalid answer agrees
    expect(m['ttrl/reward_accuracy']).to.equal(0.25);
    expect(m['accuracy/train']).to.equal(0.25);
    expect(m['rollout/valid_rate']).to.equal(0.75);
    expect(m['rollout/distinct_answers']).to.equal(2);
    expect(m['rollout/self_certainty']).to.be.closeTo(0.2, 1e-12);
  });

  it('measures rollout accuracy on the turns of roles that answer tasks, whatever their ids, and asks each judge for its own metrics', async () => {
    // the same answers under the role id 'peer0' (a peer arena's solver): measured as the solver's were
    const renamed = group.map((e) => ({ ...e, turns: e.turns.map((t) => ({ ...t, role: 'peer0' })) }));
    const peer = { ...plan([{ judge: new VerifierJudge(verify, { role: 'peer0' }), weight: 1, kind: 'verifier' }]) };
    peer.roles = { peer0: peer.roles.solver };
    const m = rolloutMetrics(peer, renamed, await scoreEpisodes(peer, renamed));
    expect([m['accuracy/train'], m['rollout/valid_rate'], m['rollout/distinct_answers']]).to.deep.equal([
      0.25, 0.75, 2,
    ]);
    // a role that does not answer tasks (a proposer) is not measured so
    peer.roles = { peer0: { ...peer.roles.peer0, kind: 'proposer', answersTasks: false } as never };
    expect(rolloutMetrics(peer, renamed, await scoreEpisodes(peer, renamed))).to.not.have.property('accuracy/train');
    // a judge's metrics hook is the loop's only way to judge-specific diagnostics (no majority judge: no ttrl/*)
    const withHook = plan([
      {
        judge: {
          ...new VerifierJudge(verify),
          score: (b: readonly Episode[]) => new VerifierJudge(verify).score(b),
          metrics: () => ({ 'mine/x': 7 }),
        },
        weight: 1,
        kind: 'custom',
      },
    ]);
    const hooked = rolloutMetrics(withHook, group, await scoreEpisodes(withHook, group));
    expect(hooked['mine/x']).to.equal(7);
    expect(Object.keys(hooked).some((k) => k.startsWith('ttrl/'))).to.equal(false);
  });

  it('reports the label accuracy of the groups the vote-share guard let through', async () => {
    const p = plan([{ judge: new MajorityJudge({ minShare: 0.6 }, verify), weight: 1, kind: 'majority' }]);
    // group t: label '6' with 2 of 4 votes (abstained, and wrong); group u: '5' with 3 of 4 (kept, right)
    const sure = [episode(0, '5'), episode(1, '5'), episode(2, '7'), episode(3, '5')].map((e) => ({
      ...e,
      group: 'u',
      id: `u${e.id}`,
    }));
    const all = [...group, ...sure];
    const scored = await scoreEpisodes(p, all);
    expect(new Set(scored.map((x) => x.episode.group))).to.deep.equal(new Set(['u']));
    const m = rolloutMetrics(p, all, scored);
    expect(m['ttrl/label_accuracy']).to.equal(0.5);
    expect(m['ttrl/trained_groups']).to.equal(0.5);
    expect(m['ttrl/trained_label_accuracy']).to.equal(1);
  });

  it('labels from the whole group but trains on the first trainPerGroup members (TTRL votes vs samples)', async () => {
    const p = plan([{ judge: new MajorityJudge({}, verify), weight: 1, kind: 'majority' }]);
    // arrival order differs from member order; the label '6' needs all five votes
    const g = [episode(4, '6'), episode(0, '5'), episode(3, '6'), episode(1, '6'), episode(2, '5')].map((e) => ({
      ...e,
      member: Number(e.id.slice(2)),
    }));
    const scored = await scoreEpisodes(p, g, 2);
    expect(scored.map((s) => [s.episode.member, s.reward])).to.deep.equal([
      [0, 0],
      [1, 1],
    ]);
    // with only the kept two voting, the tie would go to the first arrival '5'
    expect(
      (
        await scoreEpisodes(
          p,
          g.filter((e) => e.member < 2),
        )
      ).map((s) => s.reward),
    ).to.deep.equal([1, 0]);
    const samples = toSamples(scored, parseConfig(tinyConfig('/tmp')).trainer).samples;
    expect(samples).to.have.length(2);
    const error = await scoreEpisodes(p, [episode(0, '5')], 1).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(error).to.match(/t#0 has no member index/);
  });

  it('drops groups with equal rewards when asked (dynamic sampling)', async () => {
    const p = plan([{ judge: new VerifierJudge(verify), weight: 1, kind: 'verifier' }]);
    const other = [episode(0, '6'), episode(1, '7')].map((e) => ({ ...e, group: 'u', id: `u${e.id}` }));
    const scored = await scoreEpisodes(p, [...group, ...other]);
    const cfg = parseConfig({ ...tinyConfig('/tmp'), trainer: { dropEqualGroups: true } }).trainer;
    expect(toSamples(scored, cfg).samples).to.have.length(4);
  });
});
