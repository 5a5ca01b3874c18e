import { expect } from 'chai';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import { tinyConfig } from './fixtures.js';

async function failure(config: object, set: string[] = []): Promise<{ message: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'coevolve-cfg-'));
  const path = join(dir, 'c.yaml');
  writeFileSync(path, stringify(config));
  try {
    await runCommand(path, { set });
  } catch (err) {
    return { message: (err as Error).message, dir };
  }
  throw new Error('expected the run to fail');
}

describe('run: bad configs stop before any work', () => {
  it('an unknown key names its path and no run directory is made', async () => {
    const base = tinyConfig('');
    const { message, dir } = await failure({ ...tinyConfig(''), outDir: join(tmpdir(), 'never'), trainer: { lrr: 1 } });
    expect(message)
      .to.match(/trainer/)
      .and.match(/lrr/);
    expect(existsSync(join(tmpdir(), 'never', base.name))).to.equal(false);
    expect(dir).to.be.a('string');
  });

  it('a wrong type names its path', async () => {
    const { message } = await failure(tinyConfig(join(tmpdir(), 'never')), ['arena.groupSize=many']);
    expect(message).to.match(/arena\.groupSize/);
  });

  for (const bad of ['0', '2.5', 'all']) {
    it(`trainer.microBatch=${bad} is named and asks for a positive integer`, async () => {
      const { message } = await failure(tinyConfig(join(tmpdir(), 'never')), [`trainer.microBatch=${bad}`]);
      expect(message)
        .to.match(/trainer\.microBatch/)
        .and.match(bad === 'all' ? /number/ : /must be a positive integer/);
    });
  }

  for (const bad of ['0', 'many', '1.5']) {
    it(`workers=${bad} is named`, async () => {
      const { message } = await failure(tinyConfig(join(tmpdir(), 'never')), [`workers=${bad}`]);
      expect(message).to.match(/workers/);
    });
  }

  it('accelerate=fast is named with its choices', async () => {
    const { message } = await failure(tinyConfig(join(tmpdir(), 'never')), ['accelerate=fast']);
    expect(message)
      .to.match(/accelerate/)
      .and.match(/auto/)
      .and.match(/off/);
  });

  for (const [field, over, known] of [
    [
      'arena.kind',
      { arena: { kind: 'chess' } },
      /known: adversarial-critic, five-roles, flow, game, judge, memory-dialogue, observer, peer, propose-solve, solve, spy/,
    ],
    [
      'judges.0.kind',
      { judges: [{ kind: 'oracle' }] },
      /known: coverage, format, function, grounded, learnability, majority, outcome, peer, self-certainty, uncertainty, verdict, verifier/,
    ],
    [
      'roles.solver.kind',
      { roles: { solver: { kind: 'wizard', model: 'main' } } },
      /known: answer, critic, judge, memory, observer, planner, player, proposer, sneaky, solver/,
    ],
    [
      'tasks.family',
      { tasks: { ...tinyConfig('').tasks, family: 'poetry' } },
      /known: arithmetic, countdown, dialogue, math, strings/,
    ],
  ] as const) {
    it(`an unknown name in ${field} lists the known ones`, async () => {
      const out = mkdtempSync(join(tmpdir(), 'coevolve-out-'));
      const { message } = await failure({ ...tinyConfig(out), ...over });
      expect(message).to.contain(field).and.match(known);
      expect(existsSync(join(out, 'tiny'))).to.equal(false);
    });
  }
});

describe('shipped configs', () => {
  it('every run config (configs/default.yaml and configs/runs/) validates and resolves', async () => {
    const { readdirSync } = await import('node:fs');
    const { loadConfig } = await import('../../src/config/load.js');
    const { createContainer, Resolver } = await import('../../src/registry.js');
    const files = [
      'default.yaml',
      ...readdirSync('configs/runs', { recursive: true })
        .map((f) => join('runs', String(f)))
        .filter((f) => f.endsWith('.yaml')),
    ];
    expect(files).to.include.members([
      'default.yaml',
      'runs/rlvr/add2.yaml',
      'runs/ttrl/sum3.yaml',
      'runs/self-certainty/add2.yaml',
      'runs/critics/spc-sum3-steps-random-from-350.yaml',
    ]);
    for (const f of files) {
      try {
        createContainer()
          .get(Resolver)
          .plan(loadConfig(join('configs', f)));
      } catch (e) {
        throw new Error(`configs/${f}: ${(e as Error).message}`, { cause: e });
      }
    }
  });
});
