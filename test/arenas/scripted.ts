import type { Action, Turn } from '../../src/core/types.js';

/** A turn as a scripted agent plays it: the given text and its parsed action, one-token placeholders for the rest. */
export function scriptedTurn(role: string, text: string, action: Action): Turn {
  return {
    index: 0,
    role,
    model: 'm',
    prompt: [1],
    completion: [2],
    logProbs: [0],
    entropy: [0],
    selfCertainty: [0],
    text,
    action,
  };
}
