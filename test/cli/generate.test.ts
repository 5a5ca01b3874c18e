import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCommand } from '../../src/cli/generate.js';
import { readSafetensors } from '../../src/models/hf/safetensors.js';
import { fixture, rows } from '../models/hf-fixtures.js';
import { writeTinyHf } from '../models/hf-tiny.js';
import { TEST_BACKEND } from '../needs.js';

const base = { maxNewTokens: 12, temperature: 0, seed: 0, json: true, backend: TEST_BACKEND };

describe('coevolve generate', function () {
  this.timeout(60000);

  it("prints transformers' greedy ids for token ids, from a directory without a tokenizer (text null)", async () => {
    const ref = readSafetensors(`${fixture('llama3-scaled')}/reference.safetensors`).tensors;
    const prompt = rows(ref.gen_prompt_ids)[0]; // the unpadded row
    const out = JSON.parse(await generateCommand(fixture('llama3-scaled'), { ...base, promptIds: prompt.join(',') }));
    expect(out.ids).to.deep.equal(rows(ref.gen_ids)[0].slice(prompt.length));
    expect(out.logprobs).to.have.length(12);
    expect(out.logprobs.every((x: number) => x <= 0)).to.equal(true);
    expect(out.text).to.equal(null);
  });

  it('tokenizes text through the chat template, and refuses bad arguments', async () => {
    const dir = writeTinyHf(join(mkdtempSync(join(tmpdir(), 'coevolve-gen-')), 'tiny'));
    const out = JSON.parse(await generateCommand(dir, { ...base, prompt: '1+2=', maxNewTokens: 64, chat: true }));
    expect(out.ids.length).to.be.within(1, 64);
    expect(typeof out.text).to.equal('string');
    await generateCommand(dir, { ...base }).then(
      () => expect.fail('no prompt accepted'),
      (e: Error) => expect(e.message).to.match(/give --prompt TEXT or --prompt-ids/),
    );
    await generateCommand(dir, { ...base, promptIds: '1,x' }).then(
      () => expect.fail(),
      (e: Error) => expect(e.message).to.match(/--prompt-ids takes token ids/),
    );
    await generateCommand(join(dir, 'nope'), { ...base, promptIds: '1' }).then(
      () => expect.fail(),
      (e: Error) => expect(e.message).to.match(/nope does not exist/),
    );
  });
});
