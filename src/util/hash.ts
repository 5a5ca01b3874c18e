/** FNV-1a of a string: a stable 32-bit seed from an id, so a task id draws the same numbers in every run. */
export function hashText(text: string): number {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h;
}
