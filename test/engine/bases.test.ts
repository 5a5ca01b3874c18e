import { expect } from 'chai';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import { baseMakers, makeMissingBases } from '../../src/engine/bases.js';

describe('bases made on first use', () => {
  it('finds which shipped pretrain config makes each base folder', () => {
    const makers = baseMakers('configs');
    expect(makers.get(resolve('checkpoints/qwen3-chat-add2'))).to.equal(
      join('configs', 'hf', 'pretrain-qwen3-chat-add2.yaml'),
    );
    expect(makers.get(resolve('checkpoints/base-add2-judge'))).to.equal(
      join('configs', 'judges', 'pretrain-add2-judge.yaml'),
    );
    // an experiment config is not a maker, even with an out-like field
    for (const file of makers.values()) expect(file).to.match(/pretrain-[^/]*\.yaml$/);
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
});
