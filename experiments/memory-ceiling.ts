/**
 * What each manager can reach on dialogues with a rule-based answer agent that reads the
 * retrieved entries perfectly: the rule manager (the ceiling of a learned one) against the
 * baselines (always ADD, keep the last N, no memory), per horizon. It plays the real
 * memory-dialogue arena with rule policies in place of models.
 *   npx tsx experiments/memory-ceiling.ts [--horizons 8,16,32] [--count 200] [--maxEntries 8] [--people 3] [--attributes 2] [--noise 25]
 */
import { firstValueFrom, toArray } from 'rxjs';
import { MemoryDialogueArena, MANAGERS } from '../arenas/memory-dialogue.js';
import { ruleContext } from '../arenas/memory-rules.js';
import type { Turn } from '../src/core/types.js';
import { dialogue } from '../src/tasks/dialogue.js';
import { Rng } from '../src/util/rng.js';
import { arg } from './script.js';

const num = (k: string, d: string) => Number(arg(k, d));
const count = num('count', '200');
for (const sessions of arg('horizons', '8,16,32').split(',').map(Number)) {
  const d = dialogue.validate({
    sessions,
    people: num('people', '3'),
    attributes: num('attributes', '2'),
    noise: num('noise', '25'),
    questions: 4,
  });
  const rng = new Rng(7);
  const tasks = Array.from({ length: count }, (_, i) => dialogue.generate(rng, d, i));
  const row: Record<string, number> = {};
  for (const manager of MANAGERS) {
    const arena = new MemoryDialogueArena({ manager, maxEntries: num('maxEntries', '8') }, dialogue as never);
    let right = 0,
      asked = 0;
    for (const task of tasks) {
      const turns = (await firstValueFrom(arena.play(task, ruleContext).pipe(toArray()))).filter(
        (t): t is Turn => 'role' in t && t.role === 'answer',
      );
      right += turns.filter((t) => t.action.value === t.task!.answer).length;
      asked += turns.length;
    }
    row[manager === 'model' ? 'rule manager' : manager] = Math.round((1000 * right) / asked) / 1000;
  }
  console.log(JSON.stringify({ sessions, ...row }));
}
