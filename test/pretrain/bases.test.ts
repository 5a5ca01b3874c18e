import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import { baseMakers, howToMake, makeMissingBases } from '../../src/pretrain/bases.js';

describe('bases made on first use', () => {
  it('finds which shipped pretrain config makes each base folder', () => {
    const makers = baseMakers('configs');
    expect(makers.get(resolve('checkpoints/qwen3-chat-add2'))).to.equal(
      join('configs', 'pretrain', 'qwen3-chat-add2.yaml'),
    );
    expect(makers.get(resolve('checkpoints/base-add2-judge'))).to.equal(
      join('configs', 'pretrain', 'base-add2-judge.yaml'),
    );
    // a run config is not a maker, even with an out-like field
    for (const file of makers.values()) expect(file.split(sep).slice(0, 2)).to.deep.equal(['configs', 'pretrain']);
  });

  it('makes a missing base once with the config that makes it, says so, and leaves present or unknown folders alone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-bases-'));
    const configs = join(root, 'configs');
    mkdirSync(configs);
    const base = join(root, 'made-base');
    writeFileSync(join(configs, 'pretrain-x.yaml'), `name: x\ncorpus: { train: 1, heldOut: 1 }\nout: ${base}\n`);
    const c = parseConfig({
      name: 'e',
      iterations: 1,
      models: {
        a: { kind: 'hf', path: base },
        b: { kind: 'hf', path: base, lora: {} },
        c: { kind: 'hf', path: join(root, 'nobody-makes-this') },
      },
      roles: {
        s: { kind: 'solver', model: 'a' },
        t: { kind: 'solver', model: 'b' },
        u: { kind: 'solver', model: 'c' },
      },
      tasks: { family: 'arithmetic', train: { source: 'generate', count: 4 } },
      judges: [{ kind: 'verifier' }],
    });
    const made: string[] = [];
    const lines: string[] = [];
    const make = async (file: string) => {
      made.push(file);
      mkdirSync(base);
    };
    expect(await makeMissingBases(c, make, (l) => lines.push(l), configs)).to.deep.equal([
      join(configs, 'pretrain-x.yaml'),
    ]);
    expect(made).to.deep.equal([join(configs, 'pretrain-x.yaml')]);
    expect(lines).to.deep.equal([
      `${base} is missing: making it first with coevolve pretrain ${join(configs, 'pretrain-x.yaml')}`,
    ]);
    // made now: nothing more to do; the folder no config makes is preflight's to name
    expect(await makeMissingBases(c, make, () => {}, configs)).to.deep.equal([]);
    expect(made).to.have.length(1);
  });

  it('makes the base a missing maker starts from (init) first, and says how to make a missing folder', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-bases-'));
    const configs = join(root, 'configs');
    mkdirSync(configs);
    const [solver, judge] = [join(root, 'solver'), join(root, 'judge')];
    writeFileSync(join(configs, 'pretrain-solver.yaml'), `name: s\ncorpus: { train: 1, heldOut: 1 }\nout: ${solver}\n`);
    writeFileSync(
      join(configs, 'pretrain-judge.yaml'),
      `name: j\ncorpus: { train: 1, heldOut: 1 }\ninit: ${solver}\nout: ${judge}\n`,
    );
    const c = parseConfig({
      name: 'e',
      iterations: 1,
      models: { j: { checkpoint: judge } },
      roles: { s: { kind: 'solver', model: 'j' } },
      tasks: { family: 'arithmetic', train: { source: 'generate', count: 4 } },
      judges: [{ kind: 'verifier' }],
    });
    const made: string[] = [];
    const make = async (file: string) => {
      made.push(file);
      mkdirSync(file.endsWith('pretrain-solver.yaml') ? solver : judge);
    };
    await makeMissingBases(c, make, () => {}, configs);
    expect(made).to.deep.equal([join(configs, 'pretrain-solver.yaml'), join(configs, 'pretrain-judge.yaml')]);
    // a held-out file inside a missing base, named by an evaluator alone, makes that base too
    const reads = parseConfig({
      name: 'e',
      iterations: 1,
      models: { m: { kind: 'tinylm', config: { dModel: 8, nHeads: 2, nLayers: 1, context: 16 } } },
      roles: { s: { kind: 'solver', model: 'm' } },
      tasks: { family: 'arithmetic', train: { source: 'generate', count: 4 } },
      judges: [{ kind: 'verifier' }],
      evaluators: [{ kind: 'accuracy', name: 'h', options: { data: join(solver, 'heldout.jsonl') } }],
    });
    rmSync(solver, { recursive: true });
    made.length = 0;
    await makeMissingBases(reads, make, () => {}, configs);
    expect(made).to.deep.equal([join(configs, 'pretrain-solver.yaml')]);
    expect(howToMake(judge, configs)).to.equal(
      `make it with: coevolve pretrain ${join(configs, 'pretrain-judge.yaml')}`,
    );
    expect(howToMake(join(root, 'trained'), configs)).to.match(/no pretrain config .* makes it: it is a run's result/);
  });
});
