import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { TEST_BACKEND } from '../needs.js';

const PLUGIN = `import { defineArena, defineJudge, fromRun, type Arena } from 'coevolve';

export const brevity = defineJudge('brevity', { reward: (turn) => (turn.action.valid ? 1 / turn.text.length : 0) });

export const twice = defineArena('twice', (): Arena => ({
  kind: 'twice',
  roles: { solver: 'solver' },
  play: (task, ctx) => fromRun(async (emit) => {
    emit(await ctx.act('solver', { task }));
    emit(await ctx.act('solver', { task }));
  }),
}));
`;

const CONFIG = {
  name: 'outside',
  seed: 1,
  backend: TEST_BACKEND,
  iterations: 2,
  workers: 1,
  plugins: ['./plugin.ts'],
  models: { main: { config: { dModel: 16, nHeads: 2, nLayers: 1, context: 24 } } },
  roles: { solver: { kind: 'solver', model: 'main' } },
  tasks: {
    family: 'arithmetic',
    difficulty: { digits: 1, operands: 2, operators: '+' },
    train: { source: 'generate', count: 40 },
    perIteration: 4,
  },
  arena: { kind: 'twice', groupSize: 2, maxNewTokens: 3 },
  judges: [{ kind: 'verifier' }, { kind: 'brevity' }],
  checkpointEvery: 2,
};

const DRIVE = `import { runExperiment, type ExperimentInput } from 'coevolve';
const config: ExperimentInput = ${JSON.stringify(CONFIG)};
const { metrics } = await runExperiment(config, { out: 'runs/drive', log: () => {} });
console.log(JSON.stringify(metrics[metrics.length - 1]));
`;

/** The last metrics row of a run directory. */
const lastRow = (dir: string) => JSON.parse(readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').pop()!);

// A separate package outside the repository, with coevolve installed from this working tree
// as users get it (npm pack, then npm install of the tarball): its own judge and arena, named
// in its YAML config, run through the installed `coevolve` command and through runExperiment.
describe('coevolve installed as a package', function () {
  this.timeout(300000);
  const root = mkdtempSync(join(tmpdir(), 'coevolve-package-'));
  const user = join(root, 'user');

  before(() => {
    execFileSync('npm', ['pack', '--pack-destination', root, '--silent'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const tarball = readdirSync(root).find((f) => f.endsWith('.tgz'))!;
    mkdirSync(user);
    writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'my-research', private: true, type: 'module' }));
    writeFileSync(join(user, 'plugin.ts'), PLUGIN);
    writeFileSync(join(user, 'exp.json'), JSON.stringify(CONFIG)); // JSON is YAML
    writeFileSync(join(user, 'drive.ts'), DRIVE);
    writeFileSync(
      join(user, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ['*.ts'],
      }),
    );
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', join(root, tarball)], {
      cwd: user,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  });

  it('ships no experiment script (experiments/ is typechecked and tested, never packed)', () => {
    const installed = join(user, 'node_modules', 'coevolve');
    const files = (readdirSync(installed, { recursive: true }) as string[]).map((f) => f.split(sep).join('/'));
    expect(files).to.include('dist/src/pretrain/run.js'); // the listing sees the package's files
    expect(files.filter((f) => /(^|\/)experiments\//.test(f))).to.deep.equal([]);
  });

  it('runs a config naming its own judge and arena through the coevolve command', () => {
    execFileSync(join(user, 'node_modules/.bin/coevolve'), ['run', 'exp.json', '--out', 'runs/cli'], {
      cwd: user,
      stdio: 'ignore',
    });
    const last = lastRow(join(user, 'runs/cli'));
    expect(last.iteration).to.equal(2);
    expect(last['turns/solver']).to.equal(4 * 2 * 2); // four tasks, two episodes each, two answers per episode: the plugin arena played
  });

  it('runs the same through runExperiment from TypeScript, and its types check', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'drive.ts'], {
      cwd: user,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const last = JSON.parse(out.trim().split('\n').pop()!);
    expect(last.iteration).to.equal(2);
    expect(last['turns/solver']).to.equal(16);
    // the declarations shipped in dist/ type the user's code: a wrong field is caught
    const tsc = resolve('node_modules/typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', '.'], { cwd: user, stdio: 'pipe' });
    writeFileSync(
      join(user, 'wrong.ts'),
      "import { defineJudge } from 'coevolve';\nexport const w = defineJudge('w', { reward: (turn) => turn.nope });\n",
    );
    const err = (() => {
      try {
        execFileSync(process.execPath, [tsc, '-p', '.'], { cwd: user, encoding: 'utf8', stdio: 'pipe' });
        return '';
      } catch (e) {
        return String((e as { stdout: string }).stdout);
      }
    })();
    expect(err).to.match(/wrong\.ts.*Property 'nope' does not exist on type 'Turn'/);
  });
});
