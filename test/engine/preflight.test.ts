import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCommand } from '../../src/cli/run.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { preflight } from '../../src/engine/preflight.js';
import { createContainer, Resolver } from '../../src/registry.js';
import { tinyConfig } from './fixtures.js';

const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r) + '\n').join('');
/** n distinct labeled (or unlabeled) prompts from `from` on; eval files use 0..3, training files 10 on */
const good = (n: number, answer = true, from = 10) =>
  Array.from({ length: n }, (_, i) => ({
    prompt: `${from + i}+1=`,
    ...(answer ? { answer: String(from + i + 1) } : {}),
  }));

/** Runs `coevolve run` in-process on a config in a fresh folder; returns the error and whether a run folder appeared. */
async function attempt(
  over: (root: string) => Partial<ExperimentInput>,
  set: string[] = [],
): Promise<{ message: string; root: string; made: boolean }> {
  const root = mkdtempSync(join(tmpdir(), 'coevolve-pre-'));
  const out = join(root, 'runs');
  const path = join(root, 'c.yaml');
  writeFileSync(path, stringify({ ...tinyConfig(out), ...over(root) }));
  const message = await runCommand(path, { set }).then(
    () => 'no error',
    (e: Error) => e.message,
  );
  return { message, root, made: existsSync(out) && readdirSync(out).length > 0 };
}

function fileTasks(root: string, train: string, evalRows: string = jsonl(good(4, true, 0))): ExperimentInput['tasks'] {
  writeFileSync(join(root, 'train.jsonl'), train);
  writeFileSync(join(root, 'eval.jsonl'), evalRows);
  return {
    ...tinyConfig('').tasks,
    train: { source: 'file', path: join(root, 'train.jsonl') },
    eval: { source: 'file', path: join(root, 'eval.jsonl') },
  };
}

describe('run: everything is checked before the run folder is made', () => {
  it('a character outside the vocabulary names the file and line', async () => {
    const r = await attempt((root) => ({
      tasks: fileTasks(root, jsonl([...good(2), { prompt: '1+é=', answer: '2' }, ...good(30)])),
    }));
    expect(r.message).to.match(/train\.jsonl:3: .*é/);
    expect(r.made).to.equal(false);
  });

  it('a prompt too long for the context with maxNewTokens names the file and line', async () => {
    const r = await attempt((root) => ({
      tasks: fileTasks(root, jsonl([...good(1), { prompt: '1+1+1+1+1+1+1+1+1+1=', answer: '10' }, ...good(30)])),
    }));
    expect(r.message).to.match(
      /train\.jsonl:2: the prompt is 22 tokens and maxNewTokens 3 more \(the role's, else the arena's\), beyond the model's context of 24/,
    );
    expect(r.made).to.equal(false);
  });

  it("maxNewTokens beyond the model's positions is refused naming both numbers, the arena's or the role's", async () => {
    const arena = await attempt(() => ({ arena: { ...tinyConfig('').arena, maxNewTokens: 30 } }));
    expect(arena.message).to.match(
      /arena\.maxNewTokens: 30 new tokens leave no room for a prompt in model main's 24 positions \(role solver\); at most 23/,
    );
    expect(arena.made).to.equal(false);
    const role = await attempt(() => ({ roles: { solver: { kind: 'solver', model: 'main', maxNewTokens: 24 } } }));
    expect(role.message).to.match(/roles\.solver\.maxNewTokens: 24 new tokens leave no room .* 24 positions/);
  });

  it('a missing checkpoint or task file names the config field', async () => {
    const ck = await attempt((root) => ({ models: { main: { checkpoint: join(root, 'no-such-base') } } }));
    expect(ck.message).to.match(/models\.main\.checkpoint: .*no-such-base does not exist/);
    expect(ck.made).to.equal(false);
    const data = await attempt(() => ({
      tasks: { ...tinyConfig('').tasks, train: { source: 'file', path: '/nowhere/train.jsonl' } },
    }));
    expect(data.message).to.match(/tasks\.train\.path: \/nowhere\/train\.jsonl does not exist/);
  });

  it('an empty eval file, or one without answers, is refused', async () => {
    const empty = await attempt((root) => ({ tasks: fileTasks(root, jsonl(good(30)), '') }));
    expect(empty.message).to.match(/tasks\.eval\.path: .*eval\.jsonl holds no tasks/);
    const unlabeled = await attempt((root) => ({ tasks: fileTasks(root, jsonl(good(30)), jsonl(good(3, false, 0))) }));
    expect(unlabeled.message).to.match(/eval\.jsonl:1: no answer; evaluation needs one/);
    expect(unlabeled.made).to.equal(false);
  });

  it('a verifier with no answer in any training task is refused; with some missing, a warning', async () => {
    const none = await attempt((root) => ({ tasks: fileTasks(root, jsonl(good(30, false))) }));
    expect(none.message).to.match(/judges\.0 \(verifier\): needs answers, and none of the 30 training tasks has one/);
    const root = mkdtempSync(join(tmpdir(), 'coevolve-pre-'));
    const c = parseConfig({
      ...tinyConfig(root),
      tasks: fileTasks(root, jsonl([...good(20), ...good(10, false, 40)])),
    });
    const warnings: string[] = [];
    await preflight(c, createContainer().get(Resolver).plan(c), (l) => warnings.push(l));
    expect(warnings).to.deep.equal([
      'warning: judges.0 (verifier) abstains on 10 of 30 training tasks, which have no answer',
    ]);
  });

  it('a judge of a role the arena does not play is refused', async () => {
    const r = await attempt(() => ({ judges: [{ kind: 'verifier', options: { role: 'critic' } }] }));
    expect(r.message).to.match(
      /judges\.0 \(verifier\): rewards role critic, which arena 'solve' does not play .* abstain on every turn/,
    );
  });

  it('the solver role id bound to another role kind is refused', async () => {
    const r = await attempt(() => ({ roles: { solver: { kind: 'proposer', model: 'main' } } }));
    expect(r.message).to.match(/roles\.solver\.kind: arena 'solve' plays 'solver' as a solver, not a proposer/);
  });

  it('a run name or model id that is not a plain name is refused, and nothing is written outside outDir', async () => {
    const r = await attempt(() => ({}), ['name=../../escaped']);
    expect(r.message).to.match(/name: must be a plain name/);
    expect(existsSync(join(r.root, '..', 'escaped'))).to.equal(false);
    const dots = await attempt(() => ({ models: { '..': {} }, roles: { solver: { kind: 'solver', model: '..' } } }));
    expect(dots.message).to.match(/models: an id must be a plain name.*"\.\."/);
  });

  it('--out onto a folder with files but no run.json is refused and left as it was', async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-pre-'));
    const path = join(root, 'c.yaml');
    writeFileSync(path, stringify(tinyConfig(root)));
    const out = join(root, 'old');
    mkdirSync(join(out, 'checkpoints'), { recursive: true });
    writeFileSync(join(out, 'metrics.jsonl'), '{"iteration":0,"eval/pass1":0.9}\n');
    const message = await runCommand(path, { set: [], out }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    expect(message).to.match(/is not empty and holds no run\.json/);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8')).to.equal('{"iteration":0,"eval/pass1":0.9}\n');
    expect(readdirSync(out).sort()).to.deep.equal(['checkpoints', 'metrics.jsonl']);
  });

  it('arena options, a self-written task source and evaluators are checked, naming the field', async () => {
    const sp = {
      arena: { kind: 'propose-solve', options: { attempts: 2, bogus: 1 } },
      roles: { proposer: { kind: 'proposer', model: 'main' }, solver: { kind: 'solver', model: 'main' } },
    };
    expect((await attempt(() => sp)).message).to.match(
      /arena\.options\.bogus: unrecognized key; known: attempts, limits/,
    );
    expect(
      (await attempt(() => ({ arena: { kind: 'propose-solve', options: { attempts: 0 } }, roles: sp.roles }))).message,
    ).to.match(/arena\.options\.attempts: expected a number > 0, received 0/);
    expect((await attempt(() => ({ tasks: { ...tinyConfig('').tasks, train: { source: 'none' } } }))).message).to.match(
      /tasks\.train\.source: 'none' needs an arena that seeds its own tasks/,
    );
    expect((await attempt(() => ({ evaluators: [{ kind: 'exam', name: 'x' }] }))).message).to.match(
      /evaluators\.0\.kind: unknown evaluator 'exam'; known: accuracy, bank, critic, elo, exploitability, flow, memory-qa, minimax, observer, proposals, spy/,
    );
    expect(
      (await attempt(() => ({ evaluators: [{ kind: 'accuracy', name: 'x', options: { data: '/nowhere.jsonl' } }] })))
        .message,
    ).to.match(/evaluators\.0\.options\.data: \/nowhere\.jsonl does not exist/);
    expect((await attempt(() => ({ evaluators: [{ kind: 'proposals', name: 'p' }] }))).message).to.match(
      /evaluators\.0: no role of kind 'proposer' to evaluate/,
    );
    expect((await attempt(() => ({ evaluators: [{ kind: 'memory-qa', name: 'm' }] }))).message).to.match(
      /evaluators\.0: memory-qa measures a memory-dialogue arena's roles; arena 'solve' is not one/,
    );
    expect(
      (await attempt(() => ({ evaluators: [{ kind: 'memory-qa', name: 'm', options: { manager: 'oracle' } }] })))
        .message,
    ).to.match(
      /evaluators\.0\.options\.manager: expected one of "model", "always-add", "keep-last", "none", "rule", received "oracle"/,
    );
    const r = await attempt((root) => ({
      evaluators: [{ kind: 'accuracy', name: 'x', options: { data: join(root, 'e.jsonl') } }],
      tasks: (writeFileSync(join(root, 'e.jsonl'), jsonl([{ prompt: '1+é=', answer: '1' }])), tinyConfig('').tasks),
    }));
    expect(r.message).to.match(/e\.jsonl:1: .*é/);
    expect(r.made).to.equal(false);
  });

  it("any evaluator's held-out prompts leave the training set, a judge's as a solver's", async () => {
    const root = mkdtempSync(join(tmpdir(), 'coevolve-pre-'));
    const heldOut = join(root, 'held.jsonl');
    const train = join(root, 'train.jsonl');
    writeFileSync(heldOut, jsonl(good(3, true, 20)));
    writeFileSync(train, jsonl(good(6, true, 18))); // 18+1= ... 23+1=: 20, 21 and 22 are held out
    const c = parseConfig(
      {
        ...tinyConfig(join(root, 'runs')),
        models: { main: { checkpoint: 'checkpoints/base-add2' } },
        roles: { solver: { kind: 'solver', model: 'main' }, judge: { kind: 'judge', model: 'main' } },
        tasks: { ...tinyConfig('').tasks, train: { source: 'file', path: train }, eval: undefined },
        arena: { kind: 'judge', groupSize: 1, maxNewTokens: 5, options: { candidates: 2, verdicts: 1 } },
        judges: [{ kind: 'verdict' }],
        evaluators: [{ kind: 'verdicts', name: 'v', options: { data: heldOut } }],
      },
      '<test>',
    );
    const checked = await preflight(c, createContainer().get(Resolver).plan(c), () => {});
    expect(checked.train.map((t) => t.prompt)).to.deep.equal(['18+1=', '19+1=', '23+1=']);
  });

  it('every shipped experiment config passes preflight', async function () {
    this.timeout(60000);
    const files = [
      'configs/default.yaml',
      ...['rlvr', 'ttrl', 'self-certainty', 'selfplay', 'spy', 'flow'].flatMap((topic) =>
        readdirSync(join('configs/runs', topic)).map((n) => join('configs/runs', topic, n)),
      ),
    ];
    expect(files).to.include.members(['configs/default.yaml', 'configs/runs/selfplay/learnability.yaml']);
    for (const f of files) {
      const c = loadConfig(f);
      await preflight(c, createContainer().get(Resolver).plan(c), () => {});
    }
  });
});
