import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bakeTokenizerConfig, withTrainedDefaults } from '../../src/models/hf/chat-defaults.js';
import { saveHfPolicy } from '../../src/models/hf/checkpoint.js';
import { LoraAdapter } from '../../src/models/hf/lora.js';
import { writeMerged } from '../../src/models/hf/merge.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { HfPolicy } from '../../src/models/hf/policy.js';
import { loadHfTokenizer } from '../../src/models/hf/text.js';
import { HfTokenizer } from '../../src/models/hf/tokenizer.js';
import { openModel } from '../../src/models/open.js';
import { writeTinyHf } from './hf-tiny.js';

/** Qwen3's switch: unless enable_thinking is false, the generation prompt opens a think block (rendered here as Qwen3 does). */
const THINKING =
  "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}";

/** A tiny base whose chat template reads enable_thinking, as Qwen3's does. */
function thinkingBase(root: string): string {
  const dir = writeTinyHf(join(root, 'base'));
  const path = join(dir, 'tokenizer_config.json');
  const cfg = JSON.parse(readFileSync(path, 'utf8')) as { chat_template: string };
  cfg.chat_template += THINKING;
  writeFileSync(path, JSON.stringify(cfg));
  return dir;
}

const messages = [
  { role: 'system', content: 'Add.' },
  { role: 'user', content: '1+2=' },
];

describe('saved chat templates default to the variables the run trained with', () => {
  const root = mkdtempSync(join(tmpdir(), 'coevolve-chatdefaults-'));
  const base = thinkingBase(root);
  /** what a role's prompt is in training */
  const trained = loadHfTokenizer(base).chat!('Add.', '1+2=');

  it("renders the trained format when nothing is passed, and a caller's value when one is", () => {
    const tk = (dir: string) => HfTokenizer.fromDirectory(dir);
    const baked = join(root, 'baked');
    writeTinyHf(baked);
    writeFileSync(
      join(baked, 'tokenizer_config.json'),
      bakeTokenizerConfig(readFileSync(join(base, 'tokenizer_config.json'), 'utf8')),
    );
    expect(tk(base).chatIds(messages, { addGenerationPrompt: true })).not.to.deep.equal(trained); // the base's default thinks
    expect(tk(baked).chatIds(messages, { addGenerationPrompt: true })).to.deep.equal(trained);
    expect(tk(baked).chatIds(messages, { addGenerationPrompt: true, enable_thinking: true })).to.deep.equal(
      tk(base).chatIds(messages, { addGenerationPrompt: true, enable_thinking: true }),
    );
  });

  it('bakes once, and leaves a template that does not read the variable as it is', () => {
    const once = withTrainedDefaults(THINKING);
    expect(once).to.match(/^\{%- set enable_thinking = enable_thinking if enable_thinking is defined else false %\}/);
    expect(withTrainedDefaults(once)).to.equal(once);
    expect(withTrainedDefaults('{{ messages[0].content }}')).to.equal('{{ messages[0].content }}');
  });

  it('an adapter checkpoint and a merged export carry the tokenizer, rendering as in training', async () => {
    const model = HfCausalLM.load(base, { frozen: true });
    const policy = new HfPolicy(
      model,
      new LoraAdapter(model.config, { r: 2, alpha: 4, targetModules: 'all-linear' }, 1),
    );
    const ck = join(root, 'ck');
    await saveHfPolicy(ck, policy, {});
    const opened = await openModel(ck);
    if (opened.kind !== 'hf') throw new Error('expected hf');
    expect(opened.tokenizer!.chatIds(messages, { addGenerationPrompt: true })).to.deep.equal(trained);
    const merged = join(root, 'merged');
    writeMerged(merged, model, policy.adapter!);
    expect(HfTokenizer.fromDirectory(merged).chatIds(messages, { addGenerationPrompt: true })).to.deep.equal(trained);
    const full = join(root, 'full');
    await saveHfPolicy(full, new HfPolicy(HfCausalLM.load(base)), {});
    expect(HfTokenizer.fromDirectory(full).chatIds(messages, { addGenerationPrompt: true })).to.deep.equal(trained);
    policy.dispose();
  });
});
