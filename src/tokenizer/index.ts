import type { Tokenizer } from './types.js';

export type { Tokenizer } from './types.js';
/** The default role names; each gets its own token so a shared model knows which part it plays. */
export const DEFAULT_ROLES = ['proposer', 'solver', 'critic', 'judge', 'memory', 'player'] as const;

/** Printable ASCII: enough for arithmetic, string tasks and short verdicts. */
export const DEFAULT_CHARS = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

export interface TokenizerSpec {
  /** every character the vocabulary knows, each once */
  chars: string;
  /** role names; each becomes the token `<role:name>` */
  roles: string[];
}

const SPECIALS = ['<pad>', '<bos>', '<eos>'] as const;

/**
 * A character vocabulary with special tokens. Ids: 0 PAD, 1 BOS, 2 EOS, then one token per
 * role, then one per character. Plain JSON in and out (`spec`), so checkpoints carry it.
 */
export class CharTokenizer implements Tokenizer {
  readonly pad = 0;
  readonly bos = 1;
  readonly eos = 2;
  /** only EOS ends a completion */
  readonly stops: readonly number[] = [];
  readonly size: number;
  private readonly charIds = new Map<string, number>();
  private readonly roleIds = new Map<string, number>();
  private readonly names: string[];

  constructor(readonly spec: TokenizerSpec = { chars: DEFAULT_CHARS, roles: [...DEFAULT_ROLES] }) {
    this.names = [...SPECIALS];
    for (const role of spec.roles) {
      if (this.roleIds.has(role)) throw new Error(`tokenizer: role '${role}' listed twice`);
      this.roleIds.set(role, this.names.length);
      this.names.push(`<role:${role}>`);
    }
    for (const ch of spec.chars) {
      if (this.charIds.has(ch)) throw new Error(`tokenizer: character ${JSON.stringify(ch)} listed twice`);
      this.charIds.set(ch, this.names.length);
      this.names.push(ch);
    }
    this.size = this.names.length;
  }

  /** True when `ch` (one character) is in the vocabulary. */
  knows(ch: string): boolean {
    return this.charIds.has(ch);
  }

  /** Text to ids. An unknown character is an error naming it and its position. */
  encode(text: string): number[] {
    const ids: number[] = [];
    let pos = 0;
    for (const ch of text) {
      const id = this.charIds.get(ch);
      if (id === undefined) {
        throw new Error(
          `tokenizer: unknown character ${JSON.stringify(ch)} at position ${pos} of ${JSON.stringify(text)}`,
        );
      }
      ids.push(id);
      pos++;
    }
    return ids;
  }

  /** Ids to text; special and role tokens are dropped unless `withSpecial`. */
  decode(ids: readonly number[], withSpecial = false): string {
    let out = '';
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.size)
        throw new Error(`tokenizer: id ${id} outside vocabulary of ${this.size}`);
      if (id >= this.firstCharId || withSpecial) out += this.names[id];
    }
    return out;
  }

  /** The token that marks a role. */
  roleToken(role: string): number {
    const id = this.roleIds.get(role);
    if (id === undefined)
      throw new Error(`tokenizer: unknown role '${role}'; known: ${[...this.roleIds.keys()].join(', ')}`);
    return id;
  }

  /** BOS, the role token if given, then the text: how every prompt starts. */
  prompt(text: string, role?: string): number[] {
    return [this.bos, ...(role === undefined ? [] : [this.roleToken(role)]), ...this.encode(text)];
  }

  get firstCharId(): number {
    return SPECIALS.length + this.spec.roles.length;
  }

  static fromSpec(spec: unknown): CharTokenizer {
    const s = spec as Partial<TokenizerSpec> | null;
    if (!s || typeof s.chars !== 'string' || !Array.isArray(s.roles) || !s.roles.every((r) => typeof r === 'string')) {
      throw new Error('tokenizer: spec must be {chars: string, roles: string[]}');
    }
    return new CharTokenizer({ chars: s.chars, roles: s.roles });
  }
}
