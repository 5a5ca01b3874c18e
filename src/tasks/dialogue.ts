/**
 * Synthetic dialogues for memory managers (Memory-R1's setting, small enough for tiny models):
 * people whose attributes are introduced, changed and removed across sessions, then questions
 * that need the latest value, or 'unknown' for a removed fact. A turn is `ann city rome`
 * (set), `ann city -` (removed) or small talk (`hi ann`); a question is `ann city?`.
 * Sessions (the horizon), turns per session, people, attributes, questions and the share of
 * small talk are the difficulty. The task keeps the whole dialogue as plain text: its prompt
 * is the turns, one per line, sessions split by `--`, then the questions; its answer is the
 * answers joined by `|`. `readDialogue` reads it back; nothing is evaluated.
 */
import type { Task } from '../core/types.js';
import type { Rng } from '../util/rng.js';
import { z } from 'zod';
import { parseOptions } from '../config/issues.js';
import { intIn, invalid, show } from './common.js';
import type { ParsedAnswer, TaskFamily } from '../core/task-family.js';

export interface DialogueDifficulty {
  /** sessions per dialogue: the horizon, 1..256 */
  sessions: number;
  turnsPerSession: number;
  /** people talked about, 1..8 */
  people: number;
  /** attributes per person, 1..3 (city, pet, job) */
  attributes: number;
  /** questions at the end, 1..32 */
  questions: number;
  /** percentage of turns that are small talk (no fact), 0..100 */
  noise: number;
}

const DEFAULTS: DialogueDifficulty = Object.freeze({
  sessions: 8,
  turnsPerSession: 3,
  people: 3,
  attributes: 2,
  questions: 4,
  noise: 25,
});
const PEOPLE = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal'];
const VALUES: Record<string, string[]> = {
  city: ['rome', 'oslo', 'lima', 'kiev', 'bonn', 'doha', 'riga', 'baku'],
  pet: ['cat', 'dog', 'owl', 'eel', 'yak', 'emu', 'ant', 'bee'],
  job: ['chef', 'poet', 'monk', 'maid', 'sage', 'bard', 'cook', 'dean'],
};
const ATTRIBUTES = Object.keys(VALUES);
export const UNKNOWN = 'unknown';
const REMOVED = '-';
const SESSION_BREAK = '--';

export interface Dialogue {
  sessions: string[][];
  questions: Array<{ text: string; answer: string }>;
}

/** A turn's fact, when it states or removes one: the slot ('ann city') and the value, or null for a removal. */
export function readFact(turn: string): { slot: string; value: string | null } | null {
  const m = /^([a-z]+) (city|pet|job) ([a-z]+|-)$/.exec(turn);
  return m ? { slot: `${m[1]} ${m[2]}`, value: m[3] === REMOVED ? null : m[3] } : null;
}

/** The live value of every slot after these turns (a removed slot is absent). */
export function factsAfter(turns: readonly string[]): Map<string, string> {
  const facts = new Map<string, string>();
  for (const t of turns) {
    const f = readFact(t);
    if (f?.value === null) facts.delete(f.slot);
    else if (f) facts.set(f.slot, f.value);
  }
  return facts;
}

/** The answer to `ann city?` given the live facts: the value, or 'unknown'. */
export function answerFrom(facts: ReadonlyMap<string, string>, question: string): string {
  return facts.get(question.replace(/\?$/, '')) ?? UNKNOWN;
}

/** The dialogue a task of this family holds. Throws on a task of another shape (a caller bug). */
export function readDialogue(task: Task): Dialogue {
  const lines = task.prompt.split('\n');
  const questions = lines.filter((l) => l.endsWith('?'));
  const answers = task.answer?.split('|') ?? [];
  if (task.family !== 'dialogue' || answers.length !== questions.length)
    throw new Error(`readDialogue: task ${task.id} is not a dialogue with one answer per question`);
  const sessions: string[][] = [[]];
  for (const l of lines.filter((x) => !x.endsWith('?'))) {
    if (l === SESSION_BREAK) sessions.push([]);
    else sessions[sessions.length - 1].push(l);
  }
  return { sessions, questions: questions.map((text, i) => ({ text, answer: answers[i] })) };
}

/** One dialogue's turns: each turn small talk, a new fact, a changed one or a removal. */
function turnsOf(rng: Rng, d: DialogueDifficulty): string[][] {
  const slots = PEOPLE.slice(0, d.people).flatMap((p) => ATTRIBUTES.slice(0, d.attributes).map((a) => `${p} ${a}`));
  const live = new Map<string, string>();
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(xs.length)];
  return Array.from({ length: d.sessions }, () =>
    Array.from({ length: d.turnsPerSession }, () => {
      if (rng.int(100) < d.noise) return `${pick(['hi', 'ok', 'bye'])} ${pick(PEOPLE.slice(0, d.people))}`;
      const unset = slots.filter((s) => !live.has(s));
      if (unset.length && (!live.size || rng.next() < 0.5)) {
        const slot = pick(unset);
        live.set(slot, pick(VALUES[slot.split(' ')[1]]));
        return `${slot} ${live.get(slot)}`;
      }
      const slot = pick([...live.keys()]);
      if (rng.next() < 0.25) {
        live.delete(slot);
        return `${slot} ${REMOVED}`;
      }
      const value = pick(VALUES[slot.split(' ')[1]].filter((v) => v !== live.get(slot)));
      live.set(slot, value);
      return `${slot} ${value}`;
    }),
  );
}

/** An answer is one lowercase word (a value or 'unknown'), or several joined by '|'. */
export function parseDialogueAnswer(output: string): ParsedAnswer {
  const text = typeof output === 'string' ? output.trim() : '';
  return /^[a-z]+(\|[a-z]+)*$/.test(text)
    ? { valid: true, value: text }
    : invalid(`expected lowercase words joined by '|', got ${show(output)}`);
}

/** The difficulty's schema: the defaults above, each an integer in range. */
export const DialogueDifficultySchema = z.strictObject({
  sessions: intIn(1, 256).default(DEFAULTS.sessions),
  turnsPerSession: intIn(1, 20).default(DEFAULTS.turnsPerSession),
  people: intIn(1, PEOPLE.length).default(DEFAULTS.people),
  attributes: intIn(1, ATTRIBUTES.length).default(DEFAULTS.attributes),
  questions: intIn(1, 32).default(DEFAULTS.questions),
  noise: intIn(0, 100).default(DEFAULTS.noise),
});

export const dialogue: TaskFamily<DialogueDifficulty> = {
  name: 'dialogue',
  arenas: ['memory-dialogue'],
  defaults: DEFAULTS,

  difficulty: DialogueDifficultySchema,
  validate: (d, where = 'tasks.difficulty') => parseOptions(DialogueDifficultySchema, d, where),

  generate(rng: Rng, d: DialogueDifficulty, index: number): Task {
    const sessions = turnsOf(rng, d);
    const turns = sessions.flat();
    // ask about facts the dialogue mentioned, each slot at most once where there are enough
    const mentioned = [...new Set(turns.map((t) => readFact(t)?.slot).filter((s): s is string => s !== undefined))];
    const pool = mentioned.length ? mentioned : [`${PEOPLE[0]} ${ATTRIBUTES[0]}`];
    const asked: string[] = [];
    for (let q = 0; q < d.questions; q++) {
      const fresh = pool.filter((s) => !asked.includes(s));
      asked.push((fresh.length ? fresh : pool)[rng.int((fresh.length ? fresh : pool).length)]);
    }
    const facts = factsAfter(turns);
    const questions = asked.map((s) => `${s}?`);
    const prompt = [
      ...sessions
        .map((s) => s.join('\n'))
        .join(`\n${SESSION_BREAK}\n`)
        .split('\n'),
      ...questions,
    ].join('\n');
    return {
      id: `dialogue-${index}`,
      family: 'dialogue',
      prompt,
      answer: questions.map((q) => answerFrom(facts, q)).join('|'),
    };
  },

  parseAnswer: parseDialogueAnswer,

  verify(task: Task, output: string): boolean {
    if (task.family !== 'dialogue' || task.answer === undefined)
      throw new Error(`dialogue.verify: task ${task.id} is not a labelled dialogue task`);
    const parsed = parseDialogueAnswer(output);
    return parsed.valid && parsed.value === task.answer;
  },
};
