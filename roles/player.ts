import type { Action } from '../src/core/types.js';
import type { GameObservation } from '../src/core/game-text.js';
import { invalid, valid, type Observation, type Role } from '../src/core/role.js';

/**
 * A game's player: sees its seat's text and the legal moves' codes, writes one code. An
 * output that is not exactly one legal code is an invalid action (the arena penalises it).
 */
export class PlayerRole implements Role {
  readonly kind = 'player';
  readonly instructions = 'You are a player. Reply with one legal move code only.';

  render(observation: Observation): string {
    const o = observation as unknown as GameObservation;
    return `${o.text} ${o.legal.map((m) => `${m.code}=${m.name}`).join(' ')}:`;
  }

  parse(output: string, observation: Observation): Action {
    const o = observation as unknown as GameObservation;
    // exactly one code: what the exploitability evaluator scores, so the policy measured is the one played
    if (o.legal.some((m) => m.code === output)) return valid(output);
    return invalid(
      `'${output}' is not one of the legal moves ${o.legal.map((m) => `${m.code} (${m.name})`).join(', ')}`,
    );
  }
}
