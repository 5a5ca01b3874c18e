import * as tf from '@tensorflow/tfjs';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../../src/backend/index.js';
import { generate, narrows, type GenerateOptions, type Generation } from '../../src/models/generate.js';
import { HfCausalLM } from '../../src/models/hf/model.js';
import { loadHfTokenizer } from '../../src/models/hf/text.js';
import { completionText, StopStrings } from '../../src/models/stop-strings.js';
import { TinyLM, type TinyLMConfig } from '../../src/models/tinylm.js';
import { NativeDecoder } from '../../src/models/native/decode.js';
import { activeSgemm } from '../../src/backend/native/index.js';
import { TokenPieces, tokenPieces } from '../../src/tokenizer/pieces.js';
import { writeTinyHf } from './hf-tiny.js';
import { Replicas } from '../../src/parallel/replicas.js';

const small: TinyLMConfig = { vocabSize: 20, dModel: 32, nHeads: 4, nLayers: 2, context: 40, seed: 3 };
const prompts = [[1, 5, 6, 7], [1], [1, 3, 4, 12, 13, 14], [1, 19, 18]];

/** A vocabulary of two-letter tokens (token i is 'a'+i then 'a'+(7i mod 20)), so most stop strings span tokens. */
const texts = Array.from({ length: 20 }, (_, i) => String.fromCharCode(97 + i, 97 + ((7 * i) % 20)));
const enc = new TextEncoder();
const pieces = TokenPieces.of(texts.map((t) => enc.encode(t)));
const decode = (ids: readonly number[]) => ids.map((i) => texts[i]).join('');

/**
 * Where a row of `tokens` ends, worked out on whole strings (not as generate does it, a tail
 * of bytes per row): at the first EOS, or at the token whose text first holds one of `stops`
 * (ties: the occurrence that starts first), or after `limit` tokens.
 */
function expectedEnd(tokens: number[], stops: string[], eos: number | undefined, limit: number) {
  for (let j = 0; j < Math.min(limit, tokens.length); j++) {
    if (tokens[j] === eos) return { length: j + 1, stopped: true, stopString: undefined };
    const text = decode(tokens.slice(0, j + 1));
    const hits = stops.map((s) => ({ s, at: text.indexOf(s) })).filter((h) => h.at >= 0);
    if (hits.length) {
      hits.sort((a, b) => a.at - b.at);
      return { length: j + 1, stopped: true, stopString: hits[0].s };
    }
  }
  return { length: limit, stopped: false, stopString: undefined };
}

describe('stop strings', () => {
  let model: TinyLM;
  let base: Generation[];
  const N = 16;

  before(async () => {
    await initBackend('cpu');
    model = new TinyLM(small);
    base = generate(model, prompts, { maxNewTokens: N, temperature: 0 });
  });
  after(() => model.dispose());

  it('matches on the text as it grows: a stop string spanning two tokens ends the row at the second', () => {
    // the last letter of row 0's 5th token and the first of its 6th: in no single token's text
    const t = base[0].tokens;
    const s = texts[t[4]][1] + texts[t[5]][0];
    const e = expectedEnd(t, [s], undefined, N);
    expect(e.stopped, `${s} in ${decode(t)}`).to.equal(true);
    expect(texts.some((x) => x.includes(s)) && e.length < 6).to.equal(false);
    const [g] = generate(model, [prompts[0]], { maxNewTokens: N, temperature: 0, stopStrings: [s], pieces });
    expect(g.tokens).to.deep.equal(t.slice(0, e.length));
    expect(g).to.include({ stopped: true, stopString: s });
  });

  it('ends at the first occurrence: of a string met twice, and of the earlier of two strings', () => {
    const t = base[2].tokens;
    const text = decode(t);
    // a two-letter string that occurs at least twice in the row's text, and one that occurs later than it
    const twice = [...Array(text.length - 1).keys()]
      .map((i) => text.slice(i, i + 2))
      .find((s) => text.indexOf(s) !== text.lastIndexOf(s));
    expect(twice, `no repeated pair in ${text}`).to.not.equal(undefined);
    const later = text.slice(text.length - 3);
    const stops = [later, twice!];
    const e = expectedEnd(t, stops, undefined, N);
    const [g] = generate(model, [prompts[2]], { maxNewTokens: N, temperature: 0, stopStrings: stops, pieces });
    expect(g.tokens).to.deep.equal(t.slice(0, e.length));
    expect(g.stopString).to.equal(e.stopString);
    // the text a reward reads is cut before the first occurrence
    expect(completionText(decode, g)).to.equal(text.slice(0, text.indexOf(e.stopString!)));
  });

  it('EOS, a stop string and the limit end rows of one batch, each where it comes first', () => {
    // a stop string from row 1's text and an EOS from row 0's, chosen so that some row ends by each
    let found: { eos: number; stop: string; ends: ReturnType<typeof expectedEnd>[] } | undefined;
    for (const eos of base[0].tokens.slice(2)) {
      for (let i = 4; i < decode(base[1].tokens).length - 3 && !found; i++) {
        const stop = decode(base[1].tokens).slice(i, i + 3);
        const ends = base.map((g) => expectedEnd(g.tokens, [stop], eos, 12));
        const kinds = new Set(ends.map((e) => (e.stopString ? 'stop' : e.stopped ? 'eos' : 'limit')));
        if (kinds.size === 3) found = { eos, stop, ends };
      }
      if (found) break;
    }
    expect(found, 'rows that end by EOS, by stop string and by the limit').to.not.equal(undefined);
    const { eos, stop, ends } = found!;
    const gens = generate(model, prompts, { maxNewTokens: 12, temperature: 0, eos, stopStrings: [stop], pieces });
    gens.forEach((g, b) => {
      expect(g.tokens, `row ${b}`).to.deep.equal(base[b].tokens.slice(0, ends[b].length));
      expect(g.stopped, `row ${b}`).to.equal(ends[b].stopped);
      expect(g.stopString, `row ${b}`).to.equal(ends[b].stopString);
      g.logProbs.forEach((lp, j) => expect(lp, `row ${b} step ${j}`).to.be.closeTo(base[b].logProbs[j], 1e-5));
    });
    // what a reward reads: before EOS, before the stop string, or all of it
    gens.forEach((g, b) => {
      const whole = decode(g.tokens);
      const want = ends[b].stopString
        ? whole.slice(0, whole.indexOf(stop))
        : ends[b].stopped
          ? decode(g.tokens.slice(0, -1))
          : whole;
      expect(completionText(decode, g), `row ${b}`).to.equal(want);
    });
  });

  it("a stopped row's trained tokens keep the one that completed the stop string, with the log-probs score gives", () => {
    const o: GenerateOptions = { maxNewTokens: N, temperature: 1, seed: 4, pieces };
    const free = generate(model, prompts, o);
    const t = free[3].tokens;
    const stop = decode(t).slice(5, 8); // completed by the token holding letter 8, not before
    const gens = generate(model, prompts, { ...o, stopStrings: [stop] });
    const g = gens[3];
    const e = expectedEnd(t, [stop], undefined, N);
    expect(g.tokens).to.deep.equal(t.slice(0, e.length));
    expect(g.stopString).to.equal(stop);
    expect(decode(g.tokens)).to.include(stop); // the tokens hold the whole stop string
    expect(completionText(decode, g)).to.equal(decode(g.tokens).slice(0, decode(g.tokens).indexOf(stop)));
    // the sampler's log-probs are those the trainer recomputes for the same completion
    const scored = tf.tidy(
      () => model.score([{ prompt: prompts[3], completion: g.tokens }], 1).logProbs.arraySync()[0] as number[],
    );
    g.logProbs.forEach((lp, j) => expect(lp, `token ${j}`).to.be.closeTo(scored[j], 1e-4));
  });

  /** Generates on a fresh model of `small` under `backend`, counting the rows of every forward pass (the tfjs model's or the native decoder's). */
  async function countingRows(
    backend: 'cpu' | 'wasm',
    accelerate: 'auto' | 'off',
    run: (m: TinyLM, rows: number[]) => Generation[][],
  ) {
    await initBackend(backend, accelerate);
    const rows: number[] = [];
    const m = new TinyLM(small);
    const forward = m.forward.bind(m);
    m.forward = (tokens, ...rest) => {
      rows.push(tokens.shape[0]);
      return forward(tokens, ...rest);
    };
    const feed = NativeDecoder.prototype.feed;
    NativeDecoder.prototype.feed = function (this: NativeDecoder, tokens: Int32Array, T: number) {
      rows.push(tokens.length / T);
      return feed.call(this, tokens, T);
    };
    try {
      const native = activeSgemm() !== undefined;
      return { native, rows, runs: run(m, rows) };
    } finally {
      NativeDecoder.prototype.feed = feed;
      m.dispose();
      await initBackend('cpu');
    }
  }

  for (const [backend, accelerate] of [
    ['cpu', 'off'],
    ['wasm', 'auto'],
  ] as const) {
    it(`a finished row leaves the batch: later passes run fewer rows, the tokens unchanged (${backend}, accelerate ${accelerate})`, async () => {
      const o: GenerateOptions = { maxNewTokens: N, temperature: 1, seed: 9, eos: base[0].tokens[3], pieces };
      const stop = { ...o, stopStrings: [decode(base[2].tokens).slice(6, 9)] };
      let passes = 0;
      const { native, rows, runs } = await countingRows(backend, accelerate, (m, counted) => {
        const dropped = generate(m, prompts, stop);
        passes = counted.length;
        return [dropped, generate(m, prompts, { ...stop, dropFinished: false })];
      });
      if (backend === 'wasm' && !native) console.log('      (no native library: the tfjs path again)');
      const [dropped, kept] = runs;
      expect(dropped.map((g) => g.tokens)).to.deep.equal(kept.map((g) => g.tokens));
      dropped.forEach((g, b) =>
        g.logProbs.forEach((lp, j) => expect(lp, `row ${b} step ${j}`).to.be.closeTo(kept[b].logProbs[j], 1e-4)),
      );
      const early = dropped.filter((g) => g.stopped && g.tokens.length < N - 1).length;
      expect(early, 'some row ends early').to.be.above(0);
      expect(
        dropped.some((g) => !g.stopped),
        'some row runs to the limit',
      ).to.equal(true);
      // pass j + 1 (after step j) runs the rows still going once a quarter of the batch has finished (narrows)
      const mine = rows.slice(0, passes);
      let width = prompts.length;
      const expected = [width];
      for (let j = 0; j + 1 < passes; j++) {
        const going = dropped.filter((g) => g.tokens.length > j + 1).length;
        if (narrows(width, going)) width = going;
        expected.push(width);
      }
      expect(mine).to.deep.equal(expected);
      expect(Math.min(...mine)).to.be.below(prompts.length);
      expect(rows.slice(passes).every((n) => n === prompts.length)).to.equal(true);
    });
  }

  it('a replica thread stops where this thread does: the pieces reach it in shared memory', async () => {
    const replicas = await Replicas.start(1, { backend: 'cpu', accelerate: 'auto' }, { m: model });
    try {
      const o: GenerateOptions = {
        maxNewTokens: N,
        temperature: 0,
        stopStrings: [decode(base[2].tokens).slice(6, 9)],
        pieces,
      };
      const local = generate(model, prompts, o);
      const [remote] = replicas.generate('m', [prompts], [o])();
      expect(remote.map((g) => [g.tokens, g.stopString])).to.deep.equal(local.map((g) => [g.tokens, g.stopString]));
      expect(local.some((g) => g.stopString !== undefined)).to.equal(true);
    } finally {
      await replicas.close();
    }
  });

  it('narrows a batch once a quarter of it has finished, not at every row', () => {
    expect([
      narrows(64, 63),
      narrows(64, 49),
      narrows(64, 48),
      narrows(4, 3),
      narrows(4, 4),
      narrows(5, 0),
    ]).to.deep.equal([false, false, true, true, false, true]);
  });

  it('refuses an empty stop string, and stop strings without the pieces to read them', () => {
    expect(() => generate(model, prompts, { maxNewTokens: 4, stopStrings: ['ab', ''], pieces })).to.throw(
      /stop string 1 is "": each must be non-empty/,
    );
    expect(() => generate(model, prompts, { maxNewTokens: 4, stopStrings: ['ab'] })).to.throw(/pieces/);
    expect(() => new StopStrings([], pieces, 1)).to.not.throw();
  });

  describe('a Hugging Face byte-level tokenizer', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'coevolve-stop-'));
      writeTinyHf(dir, { seed: 5 });
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("each token's bytes rebuild the decoded text, a character split over tokens included", () => {
      const tk = loadHfTokenizer(dir);
      const p = tokenPieces(tk);
      const ids = tk.encode('héllo → wörld\n\n');
      const bytes = ids.flatMap((id) => [...p.bytes.subarray(p.offsets[id], p.offsets[id + 1])]);
      expect(new TextDecoder().decode(Uint8Array.from(bytes))).to.equal(tk.decode(ids));
      expect(ids.length).to.be.above('héllo → wörld\n\n'.length); // multi-byte characters span tokens
      // a special token adds nothing to the text
      expect(p.offsets[tk.eos + 1] - p.offsets[tk.eos]).to.equal(0);
    });

    it('stops a Hugging Face model on a stop string of a multi-byte character, its bytes over two tokens', () => {
      const tk = loadHfTokenizer(dir);
      const m = HfCausalLM.load(dir);
      try {
        const prompt = tk.encode('x');
        // a seed whose free run writes a two-byte character (a lead byte, then a continuation byte)
        const twoByte = (t: number[]) =>
          t.findIndex((id, i) => id >= 0xc2 && id <= 0xdf && t[i + 1] >= 0x80 && t[i + 1] <= 0xbf);
        let o: GenerateOptions = { maxNewTokens: 24, temperature: 1, seed: 0 };
        let free = generate(m, [prompt], o)[0];
        while (twoByte(free.tokens) < 0 && o.seed! < 60) {
          o = { ...o, seed: o.seed! + 1 };
          free = generate(m, [prompt], o)[0];
        }
        const t = free.tokens;
        const at = twoByte(t);
        expect(at, 'a free run with a two-byte character').to.be.at.least(0);
        const stop = new TextDecoder().decode(Uint8Array.from(t.slice(at, at + 2)));
        expect([...stop]).to.have.length(1);
        const [g] = generate(m, [prompt], { ...o, stopStrings: [stop], pieces: tokenPieces(tk) });
        const whole = tk.decode(t);
        const first = whole.indexOf(stop);
        expect(first, `${JSON.stringify(stop)} in ${JSON.stringify(whole)}`).to.be.at.least(0);
        expect(g.stopString).to.equal(stop);
        expect(tk.decode(g.tokens).indexOf(stop)).to.equal(first);
        expect(tk.decode(g.tokens.slice(0, -1))).to.not.include(stop); // the last token completed it
        expect(completionText((x) => tk.decode(x), g)).to.equal(whole.slice(0, first));
      } finally {
        m.dispose();
      }
    });
  });
});
