import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/load.js';
import { TrainerSchema, type ExperimentConfig } from '../../src/config/schema.js';

const VALID = `# a small experiment
name: arith-selfplay
iterations: 20
models:
  main:
    config:
      vocabSize: 128
      dModel: 32
      nHeads: 4
      nLayers: 2
      context: 64
roles:
  solver:
    kind: solver
    model: main
tasks:
  family: arithmetic
  train:
    source: generate
    count: 1000
  eval:
    source: file
    path: data/eval.jsonl
judges:
  - kind: exact-match
trainer:
  lr: 0.0003
`;

function minimal(): Record<string, unknown> {
  return {
    name: 'x',
    iterations: 3,
    models: { main: {}, critic: {} },
    roles: { solver: { kind: 'solver', model: 'main' } },
    tasks: { family: 'arith', train: { source: 'generate', count: 10 }, eval: { source: 'generate', count: 5 } },
    judges: [{ kind: 'exact' }],
  };
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return e as ConfigError;
  }
  expect.fail('expected a ConfigError');
}

describe('config/load', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'coevolve-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (text: string, name = 'exp.yaml') => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('loads a valid config and fills every default', () => {
    const c: ExperimentConfig = loadConfig(write(VALID));
    expect(c.name).to.equal('arith-selfplay');
    expect(c.seed).to.equal(0);
    expect(c.backend).to.equal('auto');
    expect(c.outDir).to.equal('runs');
    expect(c.models.main).to.deep.equal({
      kind: 'tinylm',
      reference: false,
      config: { vocabSize: 128, dModel: 32, nHeads: 4, nLayers: 2, context: 64 },
    });
    expect(c.tasks.difficulty).to.deep.equal({});
    expect(c.tasks.perIteration).to.equal(32);
    expect(c.arena).to.deep.equal({
      kind: 'solve',
      groupSize: 8,
      maxNewTokens: 8,
      stop: [],
      temperature: 1,
      topK: 0,
      topP: 1,
      options: {},
    });
    expect(c.judges).to.deep.equal([{ kind: 'exact-match', weight: 1, options: {} }]);
    expect(c.trainer).to.deep.equal({
      lr: 0.0003,
      advantage: 'grpo',
      rewardAggregation: 'sum',
      dropEqualGroups: false,
      ppoEpochs: 1,
      miniBatches: 1,
      lrSchedule: { kind: 'constant', warmup: 0, minRatio: 0 },
      gradient: 'sampled',
      critic: { kind: 'sampled', decay: 0.95 },
      mmd: { eta: 0.02, fitSteps: 200, fitTol: 1e-5 },
    });
    expect(c.episodesEvery).to.equal(1);
    expect(c.eval).to.deep.equal({ every: 10, samples: 16 });
    expect(c.checkpointEvery).to.equal(5);
    expect(c.evaluators).to.deep.equal([]);
    expect(c.buffer).to.deep.equal({ size: 256, replay: 0 });
    expect(c.phases).to.equal(undefined);
    expect(Object.values(c.roles).every((r) => r.train === true)).to.equal(true);
  });

  it('parseConfig validates plain objects and leaves the input untouched', () => {
    const input = minimal();
    const c = parseConfig(input);
    expect(c.arena.groupSize).to.equal(8);
    expect(input).to.not.have.property('arena');
  });

  it('stops on an unknown key and names its path', () => {
    const e = configError(() => loadConfig(write(VALID.replace('  lr: 0.0003', '  lrr: 0.0003'))));
    expect(e.issues).to.deep.include({
      path: 'trainer.lrr',
      message: `unrecognized key (did you mean "lr"?); known: ${Object.keys(TrainerSchema.shape).join(', ')}`,
    });
    expect(e.message).to.match(/trainer\.lrr: unrecognized key/);
    expect(e.message).to.include('exp.yaml');
  });

  it('rejects unknown keys at every level, each with its own path', () => {
    const obj = minimal();
    obj.extra = 1;
    (obj.models as any).main.config = { dModel: 8, width: 3 };
    (obj.judges as any)[0].wieght = 2;
    const e = configError(() => parseConfig(obj));
    const paths = e.issues.map((i) => i.path);
    expect(paths).to.include.members(['extra', 'models.main.config.width', 'judges.0.wieght']);
  });

  it('names the path and the expected type of a wrong type', () => {
    const e = configError(() => loadConfig(write(VALID + 'arena:\n  groupSize: four\n')));
    expect(e.issues).to.deep.include({ path: 'arena.groupSize', message: 'expected number, received string' });
    expect(e.message).to.include('arena.groupSize: expected number, received string');
    // the line of the offending value in the file
    expect(e.message).to.match(/exp\.yaml:\d+/);
  });

  it('rejects training on more episodes per group than are played', () => {
    const e = configError(() => loadConfig(write(VALID + 'arena:\n  groupSize: 8\n  trainPerGroup: 9\n')));
    expect(e.issues).to.deep.include({ path: 'arena.trainPerGroup', message: 'must be at most arena.groupSize (8)' });
    expect(loadConfig(write(VALID + 'arena:\n  groupSize: 8\n  trainPerGroup: 8\n')).arena.trainPerGroup).to.equal(8);
  });

  it('takes stop strings for the arena and per role, and refuses an empty one naming its path', () => {
    const c = loadConfig(write(VALID + 'arena:\n  maxNewTokens: 512\n  stop: ["</answer>", "\\n\\n"]\n'));
    expect(c.arena.stop).to.deep.equal(['</answer>', '\n\n']);
    expect(c.arena.maxNewTokens).to.equal(512);
    const role = minimal();
    (role.roles as Record<string, Record<string, unknown>>).solver.stop = [];
    expect(parseConfig(role).roles.solver.stop).to.deep.equal([]);
    const e = configError(() => loadConfig(write(VALID + 'arena:\n  stop: ["ok", ""]\n')));
    expect(e.issues).to.deep.include({
      path: 'arena.stop.1',
      message: 'a stop string must be non-empty text (an empty one would end every answer at once)',
    });
    (role.roles as Record<string, Record<string, unknown>>).solver.stop = [''];
    expect(configError(() => parseConfig(role)).issues.map((i) => i.path)).to.deep.equal(['roles.solver.stop.0']);
  });

  it('checks the learning-rate schedule: its kind, a fractional warmup, a floor above 1', () => {
    const obj = minimal();
    (obj as any).trainer = { lrSchedule: { kind: 'linear', warmup: 2.5, minRatio: 1.5 } };
    const paths = configError(() => parseConfig(obj)).issues.map((i) => i.path);
    expect(paths).to.include.members([
      'trainer.lrSchedule.kind',
      'trainer.lrSchedule.warmup',
      'trainer.lrSchedule.minRatio',
    ]);
    (obj as any).trainer = { lrSchedule: { kind: 'cosine' } };
    expect(parseConfig(obj).trainer.lrSchedule).to.deep.equal({ kind: 'cosine', warmup: 0, minRatio: 0 });
  });

  it('lists every issue in one error', () => {
    const obj = minimal();
    obj.seed = 1.5;
    obj.backend = 'tpu';
    delete obj.iterations;
    (obj.tasks as any).train = { source: 'file' };
    const e = configError(() => parseConfig(obj, 'mine'));
    const byPath = Object.fromEntries(e.issues.map((i) => [i.path, i.message]));
    expect(byPath.seed).to.equal('expected integer, received 1.5');
    expect(byPath.backend).to.match(/expected one of .*"gpu".*received "tpu"/);
    expect(byPath.iterations).to.match(/^required/);
    expect(byPath['tasks.train.path']).to.equal("required when source is 'file'");
    expect(e.message.split('\n')[0]).to.equal('invalid config mine (4 issues):');
  });

  it('names roles.<id>.model for a role whose model does not exist, listing the models', () => {
    const obj = minimal();
    (obj.roles as any).x = { kind: 'proposer', model: 'ghost' };
    const e = configError(() => parseConfig(obj));
    expect(e.issues).to.have.length(1);
    expect(e.issues[0]!.path).to.equal('roles.x.model');
    expect(e.issues[0]!.message).to.include('ghost').and.include('main, critic');
  });

  it('checks the model cross-reference even when other fields are wrong', () => {
    const obj = minimal();
    obj.seed = 0.5;
    (obj.roles as any).x = { kind: 'proposer', model: 'ghost' };
    const e = configError(() => parseConfig(obj));
    expect(e.issues.map((i) => i.path)).to.have.members(['seed', 'roles.x.model']);
  });

  it('needs at least one model and one judge', () => {
    const obj = minimal();
    obj.models = {};
    obj.roles = {};
    obj.judges = [];
    const paths = configError(() => parseConfig(obj)).issues.map((i) => i.path);
    expect(paths).to.include.members(['models', 'judges']);
  });

  it('checks that nHeads divides dModel and that a KL term has a reference model', () => {
    const obj = minimal();
    (obj.models as any).main.config = { dModel: 10, nHeads: 3 };
    obj.trainer = { klCoef: 0.05 };
    const paths = configError(() => parseConfig(obj)).issues.map((i) => i.path);
    expect(paths).to.have.members(['models.main.config.nHeads', 'models.main.reference']);
  });

  it('a reference sync needs the KL term, a positive step count and an alpha in (0, 1]', () => {
    const obj = minimal();
    obj.trainer = { refSync: { steps: 10 } };
    expect(configError(() => parseConfig(obj)).issues.map((i) => i.path)).to.deep.equal(['trainer.refSync']);
    (obj.models as any).main.reference = true;
    obj.trainer = { klCoef: 0.1, refSync: { steps: 0, mixupAlpha: 0 } };
    expect(configError(() => parseConfig(obj)).issues.map((i) => i.path)).to.have.members([
      'trainer.refSync.steps',
      'trainer.refSync.mixupAlpha',
    ]);
    obj.trainer = { klCoef: 0.1, refSync: { steps: 10 }, lrSchedule: { cycle: 10 } };
    const c = parseConfig(obj);
    expect(c.trainer.refSync).to.deep.equal({ steps: 10, mixupAlpha: 0.6 });
    expect(c.trainer.lrSchedule.cycle).to.equal(10);
  });

  it('applies overrides with YAML types', () => {
    const c = loadConfig(write(VALID), [
      'trainer.lr=3e-4',
      'arena.groupSize=4',
      'models.main.config.dModel=64',
      'name=foo',
      'trainer.dropEqualGroups=true',
      'tasks.difficulty.maxDigits=3',
      'judges.0.weight=0.5',
      'seed = 7',
    ]);
    expect(c.trainer.lr).to.equal(3e-4);
    expect(c.arena.groupSize).to.equal(4);
    expect(c.models.main.config?.dModel).to.equal(64);
    expect(c.name).to.equal('foo');
    expect(c.trainer.dropEqualGroups).to.equal(true);
    expect(c.tasks.difficulty).to.deep.equal({ maxDigits: 3 });
    expect(c.judges[0]!.weight).to.equal(0.5);
    expect(c.seed).to.equal(7);
  });

  it('an override of null removes the key, restoring its default', () => {
    const c = loadConfig(write(VALID), ['trainer.lr=null']);
    expect(c.trainer).to.not.have.property('lr');
  });

  it('validates overridden values like the file values', () => {
    const e = configError(() => loadConfig(write(VALID), ['arena.groupSize=four', 'trainer.lrr=1']));
    expect(e.issues.map((i) => i.path)).to.have.members(['arena.groupSize', 'trainer.lrr']);
  });

  it('names the field of every error in the co-evolution fields (roles, phases, evaluators, buffer)', () => {
    for (const [override, path] of [
      ['roles.solver.klReward={coef: 0.1}', 'models.main.reference'],
      ['roles.solver.klReward={type: adaptive, coef: 0.1, horizon: 10}', 'roles.solver.klReward.targetKl'],
      ['roles.solver.klReward={coef: -1}', 'roles.solver.klReward.coef'],
      ['roles.solver.klCoef=0.2', 'models.main.reference'],
      ['roles.solver.advantage=ppo', 'roles.solver.advantage'],
      ['roles.solver.train=maybe', 'roles.solver.train'],
      ['phases=[{roles: [ghost], iterations: 2}]', 'phases.0.roles.0'],
      ['phases=[{roles: [solver], iterations: 0}]', 'phases.0.iterations'],
      ['evaluators=[{kind: accuracy}]', 'evaluators.0.name'],
      ['evaluators=[{kind: accuracy, name: ../x}]', 'evaluators.0.name'],
      ['buffer.size=0', 'buffer.size'],
      ['arena.options=3', 'arena.options'],
    ] as const) {
      const e = configError(() => loadConfig(write(VALID), [override]));
      expect(
        e.issues.map((i) => i.path),
        override,
      ).to.include(path);
    }
  });

  it('asks for a KL reference only where a role trains: a frozen role needs none', () => {
    expect(() => loadConfig(write(VALID), ['trainer.klCoef=0.1', 'roles.solver.train=false'])).to.not.throw();
    const e = configError(() => loadConfig(write(VALID), ['trainer.klCoef=0.1']));
    expect(e.issues.map((i) => i.path)).to.include('models.main.reference');
  });

  it('says an infinite or NaN number is not finite (YAML .inf, .nan)', () => {
    for (const [v, shown] of [
      ['.inf', 'Infinity'],
      ['-.inf', '-Infinity'],
      ['.nan', 'NaN'],
    ]) {
      expect(() => loadConfig(write(VALID), [`trainer.lr=${v}`])).to.throw(
        `trainer.lr: expected a finite number, received ${shown}`,
      );
    }
  });

  it('rejects a malformed override, naming it', () => {
    const p = write(VALID);
    for (const bad of ['trainer.lr', '=3', 'trainer..lr=1', 'name.first=x']) {
      const e = configError(() => loadConfig(p, [bad]));
      expect(e.message, bad).to.include(`"${bad}"`);
    }
  });

  it('names the file and line of a YAML syntax error', () => {
    const p = write('name: x\niterations: 3\nmodels:\n  main: {kind: tinylm\nroles: {}\n', 'broken.yaml');
    const e = configError(() => loadConfig(p));
    expect(e.message).to.match(/broken\.yaml:\d+:\d+: YAML syntax error/);
    expect(e.issues[0]!.message).to.match(/line \d+/);
  });

  it('names the line of a bad indentation', () => {
    const p = write('name: x\niterations: 3\n  bad: indent\n', 'indent.yaml');
    const e = configError(() => loadConfig(p));
    expect(e.message).to.match(/indent\.yaml:[23]:\d+: YAML syntax error/);
  });

  it('reports a missing file and a non-mapping document clearly', () => {
    expect(() => loadConfig(join(dir, 'nope.yaml'))).to.throw(ConfigError, /nope\.yaml: cannot read: no such file/);
    expect(() => loadConfig(write('- a\n- b\n', 'list.yaml'))).to.throw(ConfigError, /expected a mapping/);
  });
});
