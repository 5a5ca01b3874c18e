import type { Action } from '../src/core/types.js';
import type { GameObservation } from '../arenas/game.js';
import { invalid, valid, type Observation, type Role } from './types.js';

/**
 * A game's player: sees its seat's text and the legal moves' codes, writes one code. An
 * output that is not exactly one legal code is an invalid action (the arena penalises it).
 */
export class PlayerRole implements Role {
  readonly kind = 'player';

  render(observation: Observation): string {
    const o = observation as unknown as GameObservation;
    return `${o.text} ${o.legal.map((m) => `${m.code}=${m.name}`).join(' ')}:`;
  }

  parse(output: string, observation: Observation): Action {
    const o = observation as unknown as GameObservation;
    const code = output.trim();
    if (o.legal.some((m) => m.code === code)) return valid(code);
    return invalid(`'${output}' is not one of the legal moves ${o.legal.map((m) => `${m.code} (${m.name})`).join(', ')}`);
  }
}
