/**
 * Roles with adapters of their own on one base. A role written
 *
 *   models: { base: { kind: hf, path: DIR, lora: { r: 16 } } }
 *   roles:  { proposer: { model: base, adapter: proposer }, solver: { model: base, adapter: solver } }
 *
 * plays through its own LoRA adapter on the base, updated only by its own loss in the joint
 * step; roles that name one adapter share it (as prime-rl shares one). Each adapter becomes a
 * model of its own, `<model>-<adapter>`, with the base's spec and its LoRA settings (the
 * schema's defaults when the base gives none; a saved one where the base's `adapters` names its
 * directory), so the trainer, checkpoints and reports treat it as any model; the run loads the
 * base once for all of them (src/engine/models.ts). The base's own entry stays only while a role
 * plays it directly.
 */
import { adapterModelId, LoraSchema, type ExperimentConfig } from './schema.js';

/** `config` with every role's adapter made a model (see the file's comment); a config without adapters is returned as it is. */
export function expandAdapters(config: ExperimentConfig): ExperimentConfig {
  const roles = Object.entries(config.roles);
  if (!roles.some(([, r]) => r.adapter !== undefined)) return config;
  const models = { ...config.models };
  const expanded: ExperimentConfig['roles'] = {};
  for (const [id, { adapter, ...role }] of roles) {
    if (adapter === undefined) {
      expanded[id] = role;
      continue;
    }
    const modelId = adapterModelId(role.model, adapter);
    const base = config.models[role.model];
    const { adapters, ...shared } = base;
    const start = adapters?.[adapter] ?? base.adapter; // a saved adapter to start from, else a new one
    models[modelId] ??=
      start !== undefined
        ? { ...shared, adapter: start, lora: undefined } // the directory has its own LoRA settings
        : { ...shared, lora: base.lora ?? LoraSchema.parse({}) };
    expanded[id] = { ...role, model: modelId };
  }
  const played = new Set(Object.values(expanded).map((r) => r.model));
  for (const id of Object.keys(config.models)) if (!played.has(id)) delete models[id];
  return { ...config, models, roles: expanded };
}
