/**
 * What roles, arenas and the loop need of a model's tokenizer, whichever kind the model is:
 * coevolve's CharTokenizer (TinyLM) or a Hugging Face tokenizer (src/models/hf). Roles
 * exchange text; each model reads and writes ids in its own vocabulary.
 */
export interface Tokenizer {
  /** how many ids the vocabulary has */
  readonly size: number;
  /** the id that ends a completion (kept in it, as a turn's last token) */
  readonly eos: number;
  /** more ids that end a completion as eos does (a model's other eos ids, a chat template's end of turn) */
  readonly stops: readonly number[];
  /** the ids a model sees for a role's prompt text */
  prompt(text: string, role?: string): number[];
  /**
   * with a chat template (a Hugging Face model that has one): the ids of a conversation of a
   * system message (what the role does) and a user message (what it sees), ending where the
   * assistant's answer begins; roles then speak through it instead of `prompt`
   */
  chat?(system: string, user: string): number[];
  /** text to ids, no special tokens added */
  encode(text: string): number[];
  /** ids to text, special tokens dropped */
  decode(ids: readonly number[]): string;
  /**
   * the bytes token `id` adds to decoded text (none for a special token), when decoding it
   * alone would not give them (a byte-level token holding part of a character); see pieces.ts
   */
  bytes?(id: number): Uint8Array;
}
