// Drives an experiment from TypeScript instead of YAML: the config is an object, a judge is
// defined right here and passed in, a task family comes from another example's plugin, and
// the result is the run's metrics.
//   npx tsx examples/drive/drive.ts [--iterations N] [--out DIR]
import { parseArgs } from 'node:util';
import { defineJudge, runExperiment, type ExperimentInput } from 'coevolve';

// a reward for output the family can read at all, beside the verifier (the built-in `format`
// judge checks <think>/<answer> tags; a script's kinds may not take a built-in name)
const parses = defineJudge('parses', { reward: (turn) => (turn.action.valid ? 1 : 0) });

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '10' }, out: { type: 'string' } } });

const config: ExperimentInput = {
  name: 'drive',
  seed: 1,
  iterations: Number(values.iterations),
  plugins: ['./examples/task-family/compare.ts'],
  models: { main: { config: { dModel: 32, nHeads: 2, nLayers: 1, context: 24 } } },
  roles: { solver: { kind: 'solver', model: 'main' } },
  tasks: {
    family: 'compare',
    difficulty: { digits: 1 },
    train: { source: 'generate', count: 200 },
    eval: { source: 'generate', count: 16 },
    perIteration: 8,
  },
  arena: { groupSize: 4, maxNewTokens: 2 },
  judges: [{ kind: 'verifier' }, { kind: 'parses', weight: 0.2 }],
  eval: { every: 5, samples: 4 },
  checkpointEvery: 5,
  outDir: 'runs/examples',
};

const { dir, metrics } = await runExperiment(config, { out: values.out, definitions: [parses] });
const last = metrics[metrics.length - 1];
console.log(JSON.stringify({ dir, iteration: last.iteration, pass1: last['eval/pass1'] }));
