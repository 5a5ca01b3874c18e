import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { readFileSync } from 'node:fs';
import { BACKEND_CHOICES, type BackendChoice } from '../backend/index.js';
import { ACCELERATE_CHOICES, type Accelerate } from '../backend/accelerate.js';
import { ArchitectureSchema } from '../models/hf/create.js';
import { ROLE_CORPORA } from '../registry.js';

const Difficulty = z.record(z.string(), z.unknown());
/** weighted difficulties; each difficulty is merged over `task.difficulty`, so shared fields are written once */
const Mixture = z.array(z.strictObject({ difficulty: Difficulty.default({}), weight: z.number().positive() })).min(1);

/** `coevolve pretrain CONFIG`: makes a base solver (and proposer) by supervised training on generated tasks. */
export const PretrainSchema = z
  .strictObject({
    /** name of the base model */
    name: z.string(),
    /** seed of the corpus, the initialisation and the batch order */
    seed: z.number().int().default(0),
    backend: z.enum(BACKEND_CHOICES as unknown as [BackendChoice, ...BackendChoice[]]).default('auto'),
    accelerate: z.enum(ACCELERATE_CHOICES as unknown as [Accelerate, ...Accelerate[]]).default('auto'), // native matrix products (auto) or tfjs's own (off)
    /**
     * threads that train and evaluate (auto: one per core): a TinyLM gets a replica in each, a
     * Hugging Face model's native matrix products use that many threads; a fixed count repeats a
     * run from its seed (the thread count changes the order products are summed in)
     */
    workers: z.union([z.literal('auto'), z.number().int().positive()]).default('auto'),
    /** the task family and difficulty the corpus is drawn from; with a proposer, also the bounds a valid proposal keeps to */
    task: z.strictObject({ family: z.string(), difficulty: Difficulty.default({}) }),
    /** draw the solver corpus and its held-out set from these cells by weight instead of from `task.difficulty` alone */
    mixture: Mixture.optional(),
    /** `share` of the training examples teach the proposer role to write tasks drawn from `mixture` (default: the solver's) */
    proposer: z
      .strictObject({
        share: z.number().gt(0).lt(1),
        mixture: Mixture.optional(),
        samples: z.number().int().positive().default(64),
      })
      .optional(),
    /**
     * `share` of the training examples teach the judge role's verdicts, in the judge's own format
     * (roles/others.ts): shown a task and an answer, the right one or another task's, it says y or
     * n; shown two, one of each in a random order (`pairwise` of the examples), it names the right
     * one, A or B. Held-out verdicts on the held-out tasks measure it.
     */
    verdicts: z
      .strictObject({
        share: z.number().gt(0).lt(1),
        pairwise: z.number().min(0).max(1).default(0.5),
        heldOut: z.number().int().positive().default(64),
        /**
         * solve-first (pointwise only): each verdict is two turns, as the judge arena's solveFirst
         * asks: shown the task alone the judge writes the right answer, then shown its own answer
         * beside the one judged (`task own|shown?`) it says y or n, so a verdict is a comparison
         */
        working: z.enum(['none', 'solve-first']).default('none'),
        /** the share of wrong answers that are the right one with one digit changed (a near miss, as a solver errs), else another task's answer */
        slips: z.number().min(0).max(1).default(0),
        /** how a slip changes its digit: to any other, or (`adjacent`) a step up or down, the nearest miss, as the judge arena's `slip` */
        slip: z.enum(['any', 'adjacent']).default('any'),
      })
      .refine((v) => v.working !== 'solve-first' || v.pairwise === 0, {
        message: 'working: solve-first judges one answer at a time: set pairwise: 0',
        path: ['working'],
      })
      .optional(),
    /** corpus size (solver, proposer and verdict examples together) and a held-out set (no prompt shared with the corpus) */
    corpus: z.strictObject({
      train: z.number().int().positive(),
      heldOut: z.number().int().positive(),
      /**
       * take the held-out set from this task file (the first `heldOut` rows: another base's
       * heldout.jsonl, say) instead of drawing it, and keep its prompts out of every training
       * example; a base continued from another (`init`) so keeps the held-out set that base
       * never saw, where a corpus of other shares would draw another one
       */
      heldOutFile: z.string().optional(),
    }),
    /** more held-out sets, evaluated and saved beside the checkpoint as `<name>.jsonl`; distinct prompts, none in the corpus */
    heldOutSets: z
      .record(
        z.string().regex(/^(?!heldout$)[A-Za-z0-9][A-Za-z0-9_-]*$/, 'a set name is a plain name other than heldout'),
        z.strictObject({ difficulty: Difficulty.default({}), count: z.number().int().positive() }),
      )
      .default({}),
    /** TinyLM shape; vocabSize comes from the tokenizer */
    model: z
      .strictObject({
        dModel: z.number().int().positive(),
        nHeads: z.number().int().positive(),
        nLayers: z.number().int().positive(),
        context: z.number().int().positive(),
      })
      .optional(),
    /** instead of a TinyLM, a new model of a real architecture with a real tokenizer, written as a Hugging Face directory */
    architecture: ArchitectureSchema.optional(),
    /**
     * with architecture: the embedding rows no example uses train as one shared row
     * (src/models/hf/shared-rows.ts), so a step computes a few hundred rows of the head instead
     * of the whole vocabulary, exactly; a fresh model's unused rows are made equal first, and an
     * `init` must have been made this way
     */
    sharedRows: z.boolean().default(false),
    train: z.strictObject({
      steps: z.number().int().positive(),
      batchSize: z.number().int().positive(),
      lr: z.number().positive(),
    }),
    /** check held-out greedy accuracy this often, and stop once it reaches `stopAtAccuracy` (a deliberately partial base) */
    evalEvery: z.number().int().positive().default(50),
    /** save the run's state (weights, Adam, the example order) this often, so a killed pretrain resumes; default evalEvery */
    checkpointEvery: z.number().int().positive().optional(),
    stopAtAccuracy: z.number().min(0).max(1).default(1),
    /** what `stopAtAccuracy` watches: the held-out set, one of `heldOutSets`, or a measure by its metric name (`eval/observer/copies`) */
    stopOn: z.string().default('heldout'),
    /** answers longer than this are cut (the solver's maxNewTokens) */
    maxNewTokens: z.number().int().positive().default(8),
    /** where the checkpoint goes */
    out: z.string(),
    /** where the run directory goes: `<outDir>/pretrain/<name>` (its curves and resumable state) */
    outDir: z.string().default('runs'),
    /**
     * start from this checkpoint's weights instead of a fresh model (same architecture and
     * tokenizer): a base that gains a skill; with architecture, a Hugging Face directory it makes
     */
    init: z.string().optional(),
    /** modules that define task families (paths from the working directory, or package names), as an experiment's `plugins` */
    plugins: z.array(z.string().min(1)).default([]),
    /** teach `init` the judge role's verdict format instead of solving (arenas/judge/corpus.ts): its examples replace the solver corpus, whose held-out set still measures the solver */
    judge: ROLE_CORPORA.judge.schema.optional(),
    /**
     * teach `init` (a solver that writes sums with working) the critic role's verdicts on the training
     * tasks instead (arenas/critic/corpus.ts), or with `critic.share` a share of them beside the solver
     * examples; held-out verdicts on carry slips and random errors measure it. A TinyLM or a Hugging Face model.
     */
    critic: ROLE_CORPORA.critic.schema.optional(),
    /**
     * teach a model (a TinyLM or a Hugging Face one) the memory arena's two roles on the training dialogues instead (arenas/memory-corpus.ts);
     * the share of valid outputs on the held-out dialogues measures it, not solving
     */
    memory: ROLE_CORPORA.memory.schema.optional(),
    /**
     * teach a model a game's legal moves as the player role writes them instead (arenas/game-corpus.ts):
     * `corpus.train` examples; the legal mass and exploitability of its table measure it, not solving
     */
    game: ROLE_CORPORA.game.schema.optional(),
    /** teach a model the spy arena's clue and vote prompts instead (arenas/spy-corpus.ts): `corpus.train` examples */
    spy: ROLE_CORPORA.spy.schema.optional(),
    /**
     * teach a model the flow arena's planner format on the training sums instead (arenas/flow-corpus.ts):
     * random steps of two numbers its memory holds; the share of sampled steps that do measures it
     */
    flow: ROLE_CORPORA.flow.schema.optional(),
    /**
     * beside the solver corpus, teach the observer role (arenas/observer/corpus.ts) to write a
     * hint for the solver from the task shown among distractors; the held-out set measures the solver
     */
    observer: ROLE_CORPORA.observer.schema.optional(),
    /**
     * beside the solver corpus (and `critic.share`, verdicts and proposer), teach the five-roles
     * arena's memory manager (arenas/five-roles/corpus.ts): `bank.share` x corpus.train examples on
     * the training tasks; the share of right greedy operations on held-out showings measures it
     */
    bank: ROLE_CORPORA.bank.schema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.judge && c.init === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['init'],
        message: 'a judge base starts from a solver: name its checkpoint',
      });
    const roleCorpora = (['judge', 'critic', 'memory', 'game', 'spy', 'flow', 'observer'] as const).filter(
      (k) => c[k] !== undefined,
    );
    if (roleCorpora.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [roleCorpora[1]],
        message: `one role corpus at a time: ${roleCorpora.join(' and ')} are given`,
      });
    if (c.critic && c.critic.share === undefined && c.init === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['init'],
        message: 'a critic base starts from a solver that writes working: name its checkpoint, or give critic.share',
      });
    // a critic with a share of the tasks goes beside the solver corpus, and so beside verdicts and proposals (the five-roles base)
    for (const k of ['critic', 'memory', 'game', 'spy', 'flow'] as const)
      if (c[k] && (c.verdicts || c.proposer) && !(k === 'critic' && c.critic?.share !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: `a ${k} base teaches its role only: drop verdicts and proposer`,
        });
    const replacing = (['judge', 'memory', 'game', 'spy', 'flow', 'observer'] as const).find((k) => c[k] !== undefined);
    if (c.bank && (replacing || (c.critic && c.critic.share === undefined)))
      ctx.addIssue({
        code: 'custom',
        path: ['bank'],
        message: `bank goes beside the solver corpus: drop ${replacing ?? 'critic (or give critic.share)'}`,
      });
    if (c.observer && c.proposer)
      ctx.addIssue({
        code: 'custom',
        path: ['observer'],
        message: "the observer writes with the proposer's token: drop proposer or observer",
      });
    // a game base is measured by its TinyLM's table of moves; critic and memory bases speak through the role's prompt, either model
    if (c.game && c.architecture)
      ctx.addIssue({
        code: 'custom',
        path: ['game'],
        message: 'a game base is a TinyLM (its measure reads a TinyLM table): drop architecture',
      });
    if (c.sharedRows && !c.architecture)
      ctx.addIssue({
        code: 'custom',
        path: ['sharedRows'],
        message: 'sharedRows is for an architecture base: a TinyLM has no large head',
      });
    // the spy corpus writes its prompts in the character tokenizer
    if (c.spy && c.architecture)
      ctx.addIssue({ code: 'custom', path: ['spy'], message: 'a spy base is a TinyLM: drop architecture' });
    // the flow corpus's measure samples a TinyLM's steps in the character tokenizer
    if (c.flow && c.architecture)
      ctx.addIssue({ code: 'custom', path: ['flow'], message: 'a flow base is a TinyLM: drop architecture' });
    if (c.judge && c.verdicts)
      ctx.addIssue({
        code: 'custom',
        path: ['verdicts'],
        message: 'a judge base has its own judge corpus (judge:); drop verdicts or judge',
      });
    if (c.judge && c.proposer)
      ctx.addIssue({
        code: 'custom',
        path: ['proposer'],
        message: 'a judge base teaches the judge role only; drop proposer or judge',
      });
    if ((c.model === undefined) === (c.architecture === undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['model'],
        message: 'give model (a TinyLM) or architecture (a Hugging Face model), one of them',
      });
    if (c.architecture && c.judge)
      ctx.addIssue({
        code: 'custom',
        path: ['architecture'],
        message: 'a Hugging Face base learns its judging from verdicts (verdicts:), not a judge corpus: drop judge',
      });
  });
export type PretrainConfig = z.output<typeof PretrainSchema>;

/** A pretrain YAML file, checked; an error names the file and each wrong field. */
export function loadPretrainConfig(path: string): PretrainConfig {
  return parsePretrainConfig(parseYaml(readFileSync(path, 'utf8')), path);
}

/** A pretrain config object, checked; an error names `where` and each wrong field. */
export function parsePretrainConfig(raw: unknown, where: string): PretrainConfig {
  const parsed = PretrainSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${where}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
