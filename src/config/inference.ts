/**
 * What `rollout: { engine: openai }` asks of a config: the inference server serves one
 * Hugging Face base and loads each trained model as a LoRA adapter on it, so every model a
 * role plays is an adapter on that one base (or a remote endpoint of its own). Full
 * fine-tuning is refused: a server cannot swap a whole model per update through a LoRA route.
 */
import type { z } from 'zod';
import { isRecord } from './fields.js';

export function inferenceServerIssues(
  models: Record<string, unknown>,
  roles: Record<string, unknown>,
  ctx: z.RefinementCtx,
): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const played = new Map<string, boolean>(); // model -> every role on it has an adapter of its own
  for (const r of Object.values(roles))
    if (isRecord(r) && typeof r.model === 'string')
      played.set(r.model, (played.get(r.model) ?? true) && r.adapter !== undefined);
  const bases = new Set<unknown>();
  for (const [id, m] of Object.entries(models)) {
    if (!isRecord(m) || !played.has(id) || m.kind === 'remote') continue;
    if (m.kind !== 'hf') {
      issue(
        ['models', id, 'kind'],
        `engine openai serves a Hugging Face base with adapters; model "${id}" is ${String(m.kind ?? 'tinylm')}: use engine local`,
      );
      continue;
    }
    bases.add(m.path);
    if (m.lora === undefined && m.adapter === undefined && !played.get(id))
      issue(
        ['models', id, 'lora'],
        `engine openai loads each update into the server as a LoRA adapter; model "${id}" is fully fine-tuned: train an adapter (lora: { r: 16 }), or use engine local`,
      );
  }
  if (bases.size > 1)
    issue(
      ['rollout', 'engine'],
      `engine openai serves one base; the models are on ${[...bases].join(' and ')}: put every role's adapter on one base`,
    );
}
