// One-off analysis (not shipped): proposer validity and the ordered (digits a, digits b) cells of N proposals.
import { initBackend } from './src/backend/index.js';
import { sampleProposals } from './src/engine/pretrain.js';
import { loadModel } from './src/models/store.js';
import { arithmetic } from './src/tasks/arithmetic.js';
const [dir, n = '512', seed = '1'] = process.argv.slice(2);
await initBackend('auto');
const loaded = await loadModel(dir);
if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error('not a tinylm');
const limits = arithmetic.validate({ digits: 3, operands: 2, operators: '+' });
const s = await sampleProposals(loaded.model, loaded.tokenizer, arithmetic, limits, { samples: Number(n), maxNewTokens: 9, seed: Number(seed) });
const cells: Record<string, number> = {};
for (const p of s.prompts) { const c = p.slice(0, -1).split('+').map((x) => x.length).join('x'); cells[c] = (cells[c] ?? 0) + 1; }
const order = ['1x1', '1x2', '2x1', '2x2', '1x3', '3x1', '2x3', '3x2', '3x3'];
console.log(JSON.stringify({ samples: s.samples, valid: s.valid, distinct: new Set(s.prompts).size, cells: Object.fromEntries(order.map((c) => [c, cells[c] ?? 0])) }));
