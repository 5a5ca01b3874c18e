/**
 * Helpers shared by the task families: difficulty validation with errors that name the
 * field, and the one verify rule, so every family judges completions the same way.
 */
import type { Task } from '../core/types.js';
import type { ParsedAnswer } from './types.js';

/** A value as it should appear in an error message (JSON where possible, cut short). */
export function show(value: unknown, max = 40): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** An invalid parse with its reason. */
export function invalid(error: string): ParsedAnswer {
  return { valid: false, value: null, error };
}

/**
 * Merges a difficulty over the defaults. Unknown fields are errors rather than ignored,
 * because a misspelt knob ('operand') would otherwise silently train at the default.
 */
export function difficultyFields(family: string, d: unknown, defaults: object): Record<string, unknown> {
  if (d === undefined) return { ...defaults };
  if (d === null || typeof d !== 'object' || Array.isArray(d)) {
    throw new Error(`${family}: difficulty must be an object, got ${show(d)}`);
  }
  const known = Object.keys(defaults);
  for (const key of Object.keys(d)) {
    if (!known.includes(key)) throw new Error(`${family}: unknown difficulty field '${key}'; known: ${known.join(', ')}`);
  }
  return { ...defaults, ...d };
}

/** An integer field in [min, max], or an error naming the field and the value. */
export function intField(family: string, field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${family}: ${field} must be an integer in ${min}..${max}, got ${show(value)}`);
  }
  return value;
}

/** The shared verify rule: parse, then compare exactly with the reference answer. */
export function verifyWith(family: string, parse: (output: string) => ParsedAnswer, task: Task, output: string): boolean {
  if (task.family !== family) {
    throw new Error(`${family}: cannot verify task '${task.id}' of family '${task.family}'`);
  }
  if (typeof task.answer !== 'string') {
    throw new Error(`${family}: task '${task.id}' has no answer to verify against`);
  }
  const parsed = parse(output);
  return parsed.valid && parsed.value === task.answer;
}
