/**
 * The safetensors format (Hugging Face's weight files): 8 bytes of header length (u64, little
 * endian), a JSON header naming each tensor's dtype, shape and byte range in the data that
 * follows, then the data. Floating tensors are read as float32 whatever their dtype (F16 and
 * BF16 are widened exactly); integer ones as plain numbers. Weights are written as F32.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, resolve, sep, win32 } from 'node:path';

export interface StoredTensor {
  dtype: string;
  shape: number[];
  /** float dtypes widened to float32; integer dtypes as Float64Array (int64 ids fit exactly below 2^53) */
  data: Float32Array | Float64Array;
}

const FLOAT_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };
const INT_BYTES: Record<string, number> = { I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** The header of a safetensors file: each tensor's dtype, shape and byte range, and the metadata. */
export function readHeader(path: string): {
  entries: Record<string, HeaderEntry>;
  metadata: Record<string, string>;
  dataStart: number;
} {
  const fd = openSync(path, 'r');
  try {
    const len = Buffer.alloc(8);
    if (readSync(fd, len, 0, 8, 0) !== 8) throw new Error(`${path}: not a safetensors file (shorter than 8 bytes)`);
    const n = Number(len.readBigUInt64LE(0));
    if (n <= 0 || n > 100 * 2 ** 20) throw new Error(`${path}: not a safetensors file (header length ${n})`);
    const text = Buffer.alloc(n);
    readSync(fd, text, 0, n, 8);
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text.toString('utf8'));
    } catch (e) {
      throw new Error(`${path}: the safetensors header is not JSON (${(e as Error).message})`);
    }
    const { __metadata__: metadata = {}, ...entries } = json as Record<string, HeaderEntry> & {
      __metadata__?: Record<string, string>;
    };
    return { entries, metadata: metadata as Record<string, string>, dataStart: 8 + n };
  } finally {
    closeSync(fd);
  }
}

/** Every tensor of a safetensors file (or only those `want` keeps), floats as float32. */
export function readSafetensors(
  path: string,
  want: (name: string) => boolean = () => true,
): { tensors: Record<string, StoredTensor>; metadata: Record<string, string> } {
  const { entries, metadata, dataStart } = readHeader(path);
  const bytes = readFileSync(path);
  const tensors: Record<string, StoredTensor> = {};
  for (const [name, e] of Object.entries(entries)) {
    if (!want(name)) continue;
    const [begin, end] = e.data_offsets;
    const count = e.shape.reduce((a, b) => a * b, 1);
    const width = FLOAT_BYTES[e.dtype] ?? INT_BYTES[e.dtype];
    if (width === undefined)
      throw new Error(
        `${path}: tensor ${name} has dtype ${e.dtype}; supported: ${[...Object.keys(FLOAT_BYTES), ...Object.keys(INT_BYTES)].join(', ')} (quantized weights are not)`,
      );
    if (end - begin !== count * width || dataStart + end > bytes.length)
      throw new Error(
        `${path}: tensor ${name} (${e.dtype} ${JSON.stringify(e.shape)}) has ${end - begin} bytes at ${begin}, not ${count * width}, or runs past the file`,
      );
    const raw = bytes.subarray(dataStart + begin, dataStart + end);
    tensors[name] = { dtype: e.dtype, shape: e.shape, data: decode(e.dtype, raw, count) };
  }
  return { tensors, metadata };
}

function decode(dtype: string, raw: Buffer, count: number): Float32Array | Float64Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (dtype === 'F32') {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  if (dtype === 'BF16') {
    // bfloat16 is the top half of a float32: shifted back, it is exact
    const bits = new Uint32Array(count);
    for (let i = 0; i < count; i++) bits[i] = view.getUint16(2 * i, true) << 16;
    return new Float32Array(bits.buffer);
  }
  if (dtype === 'F16') {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
    return out;
  }
  if (dtype === 'F64') return Float32Array.from({ length: count }, (_, i) => view.getFloat64(8 * i, true));
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    out[i] =
      dtype === 'I64'
        ? Number(view.getBigInt64(8 * i, true))
        : dtype === 'I32'
          ? view.getInt32(4 * i, true)
          : dtype === 'I16'
            ? view.getInt16(2 * i, true)
            : dtype === 'I8'
              ? view.getInt8(i)
              : view.getUint8(i);
  }
  return out;
}

/** IEEE half to float: sign, 5 exponent bits, 10 mantissa bits; subnormals, infinities and NaN kept. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/**
 * The weights of a Hugging Face directory: `model.safetensors`, or every shard that
 * `model.safetensors.index.json` names. Refuses a directory with neither, naming both.
 */
export function readCheckpointTensors(dir: string, want?: (name: string) => boolean): Record<string, StoredTensor> {
  const out: Record<string, StoredTensor> = {};
  for (const file of weightFiles(dir)) Object.assign(out, readSafetensors(join(dir, file), want).tensors);
  return out;
}

/** The weight files of `dir`, relative to it: `model.safetensors`, or the shards its index names, each once. */
export function weightFiles(dir: string): string[] {
  if (existsSync(join(dir, 'model.safetensors'))) return ['model.safetensors'];
  if (!existsSync(join(dir, 'model.safetensors.index.json')))
    throw new Error(
      `${dir}: no model.safetensors and no model.safetensors.index.json (only safetensors weights are read; a .bin or .pt checkpoint is not)`,
    );
  return indexShards(dir);
}

/**
 * The shards `DIR/model.safetensors.index.json` names, each once. The index is data from
 * wherever the model came from, so each name must be a relative path that stays inside the
 * directory, also once links are followed; else a name like `../../x` would read any file.
 */
export function indexShards(dir: string): string[] {
  const index = join(dir, 'model.safetensors.index.json');
  let map: Record<string, unknown>;
  try {
    map = (JSON.parse(readFileSync(index, 'utf8')) as { weight_map: Record<string, unknown> }).weight_map;
  } catch (e) {
    throw new Error(`${index}: ${(e as Error).message}`);
  }
  if (!map || typeof map !== 'object') throw new Error(`${index}: weight_map is missing`);
  const shards = [...new Set(Object.values(map))];
  const roots = [realpathSync(dir), ...hubBlobs(dir)];
  for (const shard of shards) {
    const refuse = (why: string) => new Error(`${index}: weight_map names ${String(shard)}, ${why}`);
    if (typeof shard !== 'string' || shard === '') throw refuse('which is not a file name');
    if (isAbsolute(shard) || win32.isAbsolute(shard))
      throw refuse("an absolute path (a shard is a path inside the model's directory)");
    if (shard.split(/[\\/]/).includes('..')) throw refuse("which leaves the model's directory");
    const path = join(dir, shard);
    if (!existsSync(path)) throw refuse('which is missing');
    const real = realpathSync(path);
    if (!roots.some((r) => real.startsWith(r + sep)))
      throw refuse(`which is a link to ${real}, outside the model's directory`);
  }
  return shards as string[];
}

/**
 * The Hugging Face hub cache keeps a model as `snapshots/<revision>/` whose files are links to
 * `../../blobs/<hash>`: those links stay inside the cached repository, so they are allowed.
 */
function hubBlobs(dir: string): string[] {
  const blobs = resolve(dir, '..', '..', 'blobs');
  return basename(resolve(dir, '..')) === 'snapshots' && existsSync(blobs) ? [realpathSync(blobs)] : [];
}

/**
 * Writes float32 tensors as a safetensors file (F32), in the order given, with string metadata
 * (transformers writes `{"format": "pt"}`). The header is padded with spaces to 8 bytes, as
 * the reference implementation does, so the data stays aligned.
 */
export function writeSafetensors(
  path: string,
  tensors: Record<string, { shape: readonly number[]; data: Float32Array }>,
  metadata: Record<string, string> = { format: 'pt' },
): void {
  writeFileSync(path, encodeSafetensors(tensors, metadata));
}

/** The bytes of a safetensors file of float32 `tensors` (see writeSafetensors). */
export function encodeSafetensors(
  tensors: Record<string, { shape: readonly number[]; data: Float32Array }>,
  metadata: Record<string, string> = { format: 'pt' },
): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`writeSafetensors: ${name} has shape ${JSON.stringify(t.shape)} but ${t.data.length} values`);
    header[name] = { dtype: 'F32', shape: [...t.shape], data_offsets: [offset, offset + 4 * count] };
    offset += 4 * count;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - ((Buffer.byteLength(text) + 8) % 8)) % 8);
  const head = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(8 + head.length + offset);
  out.writeBigUInt64LE(BigInt(head.length), 0);
  head.copy(out, 8);
  let at = 8 + head.length;
  for (const t of Object.values(tensors)) {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(out, at);
    at += t.data.byteLength;
  }
  return out;
}
