/**
 * The chat template variables a run renders every prompt with, and how what a run saves
 * keeps them. Roles speak with thinking off (Qwen3's templates read `enable_thinking`; other
 * templates ignore it), so a trained model knows that format. A saved tokenizer_config.json
 * gets each template a first line that makes the trained value the default:
 *
 *   {%- set enable_thinking = enable_thinking if enable_thinking is defined else false %}
 *
 * so transformers' apply_chat_template, vLLM and `coevolve serve` render the trained format
 * when a request passes nothing, and a request that passes the variable (vLLM's
 * chat_template_kwargs) still sets it.
 */
export const CHAT_KWARGS: Readonly<Record<string, boolean>> = { enable_thinking: false };

/** `source` with a default line for every trained variable it reads (once: a baked template is left as it is). */
export function withTrainedDefaults(source: string): string {
  const lines = Object.entries(CHAT_KWARGS)
    .filter(([k]) => new RegExp(`\\b${k}\\b`).test(source))
    .map(([k, v]) => `{%- set ${k} = ${k} if ${k} is defined else ${JSON.stringify(v)} %}`)
    .filter((line) => !source.includes(line));
  return lines.join('') + source;
}

/** tokenizer_config.json's text with its chat template(s) defaulting to the trained variables; other text is returned as it is. */
export function bakeTokenizerConfig(text: string): string {
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return text; // not ours to judge here: the tokenizer's reader reports it
  }
  const t = config.chat_template;
  if (typeof t === 'string') config.chat_template = withTrainedDefaults(t);
  else if (Array.isArray(t))
    config.chat_template = t.map((x: unknown) =>
      x && typeof x === 'object' && typeof (x as { template?: unknown }).template === 'string'
        ? { ...x, template: withTrainedDefaults((x as { template: string }).template) }
        : x,
    );
  else return text;
  return JSON.stringify(config, null, 2) + '\n';
}
