// A custom two-role arena: a hinter sees the task and writes a short hint, then a solver
// sees the hint and the task and answers. The solver is paid by the verifier; the hinter by
// the episode's outcome, whether the solver it hinted got it right (cooperation). On a base
// that never saw hints, a hint first costs the solver its bearings: the hinter learns when
// to stay silent (an empty hint) before it learns what helps.
import { z } from 'zod';
import { defineArena, defineRole, fromRun, invalid, valid, type Arena, type EpisodeEnd, type Turn } from 'coevolve';

// New roles reuse role tokens a model's tokenizer already has (proposer, solver, critic, judge, memory, player).
export const hinter = defineRole('hinter', {
  token: 'proposer',
  render: (o) => `hint ${o.task.prompt}`,
  parse: (out) => (out.length <= 3 ? valid(out) : invalid(`a hint is at most 3 characters, got ${out.length}`)),
});

export const hintedSolver = defineRole('hinted-solver', (parseAnswer) => ({
  kind: 'hinted-solver',
  answersTasks: true, // its answers are the task's: the run measures its accuracy
  token: 'solver',
  // no hint, no prefix: the solver then sees the task as a plain solver would
  render: (o) => (o.hint ? `${String(o.hint)}|${o.task.prompt}` : o.task.prompt),
  parse: (out) => parseAnswer(out),
}));

// the arena's options: registered with it, so `arena.options` is parsed before `make` sees it
const HintOptions = z.strictObject({ solverSeesHint: z.boolean().default(true) });

export const hint = defineArena(
  'hint',
  (options, family): Arena => {
    const { solverSeesHint } = options as z.output<typeof HintOptions>;
    return {
      kind: 'hint',
      roles: { hinter: 'hinter', solver: 'hinted-solver' },
      play: (task, ctx) =>
        fromRun<Turn | EpisodeEnd>(async (emit) => {
          const h = await ctx.act('hinter', { task });
          emit(h);
          const s = await ctx.act('solver', { task, hint: solverSeesHint && h.action.valid ? h.action.value : '' });
          emit(s);
          emit({ end: true, outcome: { hinter: s.action.valid && family.verify(task, s.text) ? 1 : 0 } });
        }),
      // what each role is shown at its longest, so the run checks before any work that it fits the model
      observations: (task) => [
        { role: 'hinter', observation: { task } },
        { role: 'solver', observation: { task, hint: 'xxx' } },
      ],
      // the arena's own rollout metrics, logged beside the rewards
      metrics: (episodes) => {
        const hints = episodes.flatMap((e) => e.turns.filter((t) => t.role === 'hinter'));
        return {
          'hint/silent':
            hints.filter((t) => t.action.valid && t.action.value === '').length / Math.max(1, hints.length),
        };
      },
    };
  },
  HintOptions,
);
