/**
 * config.json against the weights' own headers, before any tensor data is read and any tensor
 * is made. The layer count comes first: weights are listed per layer, and a config claiming
 * 10^9 layers beside 4 layers' weights once exhausted memory listing them. Then every weight the
 * config implies must be held, as a float, with the shape its fields give, and nothing else may
 * be. Each refusal is one line naming config.json, the field and the weight file. A PEFT
 * adapter's header is checked the same way against its r and the base's projections.
 */
import { join } from 'node:path';
import type { HfConfig } from './config.js';
import { checkFloat, IGNORED, unknownWeights, weightSpecs, type LinearModule } from './layout.js';
import { readHeader, weightFiles } from './safetensors.js';

/** A tensor as a header declares it (not yet checked), and the file declaring it. */
interface Declared {
  file: string;
  dtype?: string;
  shape?: unknown;
}

/** Refuses the weights of `dir` unless they are what `c`, read from the config.json at `where`, implies. */
export function checkWeightHeaders(c: HfConfig, where: string, dir: string): void {
  const files = weightFiles(dir);
  const held = new Map<string, Declared>();
  for (const file of files)
    for (const [name, e] of Object.entries(readHeader(join(dir, file)).entries))
      held.set(name, { file, dtype: e?.dtype, shape: e?.shape });
  const label = files[0] === 'model.safetensors' ? files[0] : 'the shards of model.safetensors.index.json';
  const gpt2 = c.architecture === 'GPT2LMHeadModel';
  const layer = gpt2 ? /^transformer\.h\.(\d+)\./ : /^model\.layers\.(\d+)\./;
  let top = -1;
  for (const name of held.keys()) {
    const m = layer.exec(name);
    if (m && !IGNORED.test(name)) top = Math.max(top, Number(m[1]));
  }
  if (top + 1 !== c.layers)
    throw new Error(
      `${where}: ${gpt2 ? 'n_layer' : 'num_hidden_layers'} is ${c.layers} but ${label} holds ${top < 0 ? 'no layers' : `layers 0..${top}`}`,
    );
  for (const s of weightSpecs(c)) {
    const t = held.get(s.name);
    if (!t) throw new Error(`${where}: ${label} holds no ${s.name}, which ${s.by ?? c.architecture} implies`);
    checkFloat(join(dir, t.file), s.name, t.dtype);
    const shape = JSON.stringify(t.shape);
    if (shape === JSON.stringify(s.shape)) continue;
    const i = s.shape.findIndex((n, k) => !Array.isArray(t.shape) || t.shape[k] !== n);
    throw new Error(
      i < 0
        ? `${where}: implies ${s.name} as ${JSON.stringify(s.shape)} but ${t.file} holds it as ${shape}`
        : `${where}: ${s.dims[i]} is ${s.shape[i]} but ${t.file} holds ${s.name} as ${shape}`,
    );
  }
  const extra = unknownWeights(c, [...held.keys()]);
  if (extra) throw new Error(`${where}: ${label} holds weights this ${c.architecture} does not have: ${extra}`);
}

/** A PEFT adapter's tensor names: the module, A or B, and PEFT's optional adapter name. */
export const ADAPTER_KEY = /^base_model\.model\.(.+)\.lora_([AB])(?:\.default)?\.weight$/;

/**
 * Refuses an adapter file (at `file`) whose header lacks a float A [r, in] and B [out, r] for a
 * module of `modules`, or holds a tensor that is no adapter weight; `where` is its adapter_config.json.
 */
export function checkAdapterHeader(where: string, file: string, r: number, modules: LinearModule[]): void {
  const held = new Map<string, { key: string; dtype?: string; shape?: unknown }>();
  for (const [key, e] of Object.entries(readHeader(file).entries)) {
    const m = ADAPTER_KEY.exec(key);
    if (!m) throw new Error(`${where}: adapter_model.safetensors: unexpected tensor ${key}`);
    held.set(`${m[1]}.${m[2]}`, { key, dtype: e?.dtype, shape: e?.shape });
  }
  for (const m of modules)
    for (const [part, want] of [
      ['A', [r, m.in]],
      ['B', [m.out, r]],
    ] as const) {
      const t = held.get(`${m.name}.${part}`);
      if (!t)
        throw new Error(
          `${where}: target_modules names ${m.name}, but adapter_model.safetensors holds no lora_${part} for it`,
        );
      checkFloat(file, t.key, t.dtype);
      if (JSON.stringify(t.shape) === JSON.stringify(want)) continue;
      const rank = Array.isArray(t.shape) && t.shape.length === 2 ? t.shape[part === 'A' ? 0 : 1] : undefined;
      throw new Error(
        rank !== r
          ? `${where}: r is ${r} but adapter_model.safetensors holds ${t.key} as ${JSON.stringify(t.shape)}`
          : `${file}: ${t.key} is ${JSON.stringify(t.shape)}, but the base's ${m.name} (${m.in} in, ${m.out} out) implies ${JSON.stringify(want)}`,
      );
    }
}
