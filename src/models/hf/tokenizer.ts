/**
 * A Hugging Face tokenizer directory, read as transformers reads it: `tokenizer.json` through
 * `@huggingface/tokenizers`, `tokenizer_config.json` for the special tokens and the chat
 * template (rendered with `@huggingface/jinja`, given what `apply_chat_template` gives a
 * template: messages, add_generation_prompt, bos_token, eos_token and any extra keyword), and
 * the eos ids from `generation_config.json`, else `config.json`, else the eos token.
 */
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ChatMessage {
  role: string;
  content: string;
}
export interface ChatOptions {
  addGenerationPrompt?: boolean;
  [kwarg: string]: unknown;
}

type Json = Record<string, unknown>;

/** A token given as a string or as `{ content }`, as tokenizer_config.json writes both. */
const tokenText = (v: unknown): string | undefined =>
  typeof v === 'string'
    ? v
    : v && typeof v === 'object' && typeof (v as Json).content === 'string'
      ? ((v as Json).content as string)
      : undefined;

export class HfTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly template?: Template;
  private readonly specials: { bos?: string; eos?: string };
  readonly vocabSize: number;
  readonly eosIds: number[];
  readonly bosId?: number;
  readonly padId?: number;
  /** ids that end an assistant turn: the eos ids and the chat template's end-of-turn token */
  readonly endOfTurnIds: number[];
  /** whether tokens are written in GPT-2's byte-to-unicode alphabet (a ByteLevel decoder) */
  private readonly byteLevel: boolean;
  /** added tokens by id: their text, and whether they are special (dropped from decoded text) */
  private readonly added = new Map<number, { content: string; special: boolean }>();

  /** From parsed files; `where` names the directory in errors. */
  constructor(
    tokenizerJson: Json,
    config: Json = {},
    eos: number[] = [],
    readonly where = 'tokenizer',
  ) {
    try {
      this.tokenizer = new Tokenizer(tokenizerJson, config);
    } catch (e) {
      throw new Error(`${where}/tokenizer.json: ${(e as Error).message}`);
    }
    const vocab = (tokenizerJson.model as Json | undefined)?.vocab;
    // the largest id plus one, over the model's vocabulary and the added tokens (a loop: 151k ids overflow a spread)
    let top = Array.isArray(vocab) ? vocab.length - 1 : -1;
    if (!Array.isArray(vocab))
      for (const id of Object.values((vocab ?? {}) as Record<string, number>)) top = Math.max(top, id);
    for (const t of (tokenizerJson.added_tokens ?? []) as { id: number; content: string; special?: boolean }[]) {
      top = Math.max(top, t.id);
      this.added.set(t.id, { content: t.content, special: t.special === true });
    }
    const decoder = tokenizerJson.decoder as Json | null | undefined;
    const decoders = decoder?.type === 'Sequence' ? ((decoder.decoders ?? []) as Json[]) : decoder ? [decoder] : [];
    this.byteLevel = decoders.some((d) => d.type === 'ByteLevel');
    this.vocabSize = top + 1;
    this.specials = { bos: tokenText(config.bos_token), eos: tokenText(config.eos_token) };
    this.bosId = this.specials.bos === undefined ? undefined : this.tokenizer.token_to_id(this.specials.bos);
    const pad = tokenText(config.pad_token);
    this.padId = pad === undefined ? undefined : this.tokenizer.token_to_id(pad);
    const eosToken = this.specials.eos === undefined ? undefined : this.tokenizer.token_to_id(this.specials.eos);
    this.eosIds = eos.length ? eos : eosToken === undefined ? [] : [eosToken];
    const source = chatTemplate(config.chat_template, `${where}/tokenizer_config.json`);
    if (source !== undefined) {
      try {
        this.template = new Template(source);
      } catch (e) {
        throw new Error(`${where}/tokenizer_config.json: chat_template: ${(e as Error).message}`);
      }
    }
    this.endOfTurnIds = [...new Set([...this.eosIds, ...this.turnEnd(source)])];
  }

  /** Reads `dir`: tokenizer.json (required), tokenizer_config.json, generation_config.json or config.json. */
  static fromDirectory(dir: string): HfTokenizer {
    const read = (name: string): Json | undefined => {
      const path = join(dir, name);
      if (!existsSync(path)) return undefined;
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as Json;
      } catch (e) {
        throw new Error(`${path}: ${(e as Error).message}`);
      }
    };
    const tokenizer = read('tokenizer.json');
    if (!tokenizer)
      throw new Error(`${dir}/tokenizer.json is missing (only fast tokenizers, tokenizer.json, are read)`);
    const generation = read('generation_config.json');
    const eos =
      eosIds(generation?.eos_token_id, `${dir}/generation_config.json`) ??
      eosIds(read('config.json')?.eos_token_id, `${dir}/config.json`) ??
      [];
    return new HfTokenizer(tokenizer, read('tokenizer_config.json') ?? {}, eos, dir);
  }

  get hasChatTemplate(): boolean {
    return this.template !== undefined;
  }

  /** Text to ids; with special tokens (the default) as transformers' `tokenizer(text)` adds them. */
  encode(text: string, o: { addSpecialTokens?: boolean } = {}): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: o.addSpecialTokens ?? true }).ids;
  }

  decode(ids: readonly number[], o: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return ''; // the library refuses an empty list
    return this.tokenizer.decode([...ids], { skip_special_tokens: o.skipSpecialTokens ?? false });
  }

  /**
   * The bytes token `id` adds to text decoded with special tokens skipped: a byte-level token's
   * bytes through GPT-2's byte-to-unicode table (one may hold part of a character), a byte
   * fallback token's <0xNN> byte, a SentencePiece token with its ▁ as a space; none for a
   * special token. Decoding a whole text may differ only where a decoder cleans it (the first
   * token's leading space, for some).
   */
  tokenBytes(id: number): Uint8Array {
    const added = this.added.get(id);
    if (added) return added.special ? new Uint8Array(0) : utf8.encode(added.content);
    const token = this.tokenizer.id_to_token(id);
    if (token === undefined || token === null) return new Uint8Array(0);
    if (this.byteLevel) {
      const bytes = [...token].map((ch) => UNICODE_BYTES.get(ch));
      if (bytes.every((b) => b !== undefined)) return Uint8Array.from(bytes as number[]);
    }
    const hex = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
    if (hex) return Uint8Array.of(parseInt(hex[1], 16));
    if (token.includes('\u2581')) return utf8.encode(token.replaceAll('\u2581', ' '));
    return utf8.encode(this.decode([id], { skipSpecialTokens: true }));
  }

  idOf(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  /** The chat template's text for `messages`, as `apply_chat_template(..., tokenize=False)` renders it. */
  applyChatTemplate(messages: readonly ChatMessage[], o: ChatOptions = {}): string {
    if (!this.template) throw new Error(`${this.where}: no chat_template in tokenizer_config.json`);
    const { addGenerationPrompt, ...kwargs } = o;
    return this.template.render({
      ...kwargs,
      messages,
      add_generation_prompt: addGenerationPrompt ?? false,
      bos_token: this.specials.bos ?? '',
      eos_token: this.specials.eos ?? '',
    });
  }

  /** Its ids, without adding special tokens again (as `apply_chat_template(tokenize=True)`). */
  chatIds(messages: readonly ChatMessage[], o: ChatOptions = {}): number[] {
    return this.encode(this.applyChatTemplate(messages, o), { addSpecialTokens: false });
  }

  /**
   * The template's end-of-turn token: rendered around a marker assistant message, the special
   * token that follows the message's content (`<|im_end|>` for Qwen, `<|eot_id|>` for Llama 3).
   */
  private turnEnd(source?: string): number[] {
    if (!this.template || source === undefined) return [];
    const marker = 'coevolve-turn-marker';
    let text: string;
    try {
      text = this.applyChatTemplate([
        { role: 'user', content: 'x' },
        { role: 'assistant', content: marker },
      ]);
    } catch {
      return [];
    }
    const after = text.slice(text.indexOf(marker) + marker.length);
    const ids = this.encode(after, { addSpecialTokens: false });
    const first = ids.find((id) => this.decode([id], { skipSpecialTokens: true }) === '' && this.decode([id]) !== '');
    return first === undefined ? [] : [first];
  }
}

const utf8 = new TextEncoder();

/** GPT-2's byte-to-unicode table inverted: byte-level vocabularies write byte b as one character, printable bytes as themselves and the rest from U+0100 on. */
const UNICODE_BYTES = (() => {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) map.set(String.fromCodePoint(printable(b) ? b : 256 + extra++), b);
  return map;
})();

/** The template source: a string, or the one named `default` of a list (transformers allows both). */
function chatTemplate(v: unknown, where: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const named = v.find((t) => t && typeof t === 'object' && (t as Json).name === 'default') as Json | undefined;
    if (named && typeof named.template === 'string') return named.template;
  }
  throw new Error(
    `${where}: chat_template: a string or a list of {name, template} with one named default, got ${JSON.stringify(v).slice(0, 80)}`,
  );
}

/** eos_token_id as a list; undefined when absent or null. */
function eosIds(v: unknown, where: string): number[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = Array.isArray(v) ? v : [v];
  if (!list.every((x) => Number.isInteger(x) && x >= 0))
    throw new Error(`${where}: eos_token_id: a token id or a list of them, got ${JSON.stringify(v)}`);
  return list as number[];
}
