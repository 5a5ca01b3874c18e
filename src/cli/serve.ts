import { basename, resolve } from 'node:path';
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { loadModel } from '../models/store.js';
import { serve } from '../openai/server.js';
import { untilStopped, warnIfOpen } from './lifetime.js';

export interface ServeCommandOptions { host: string; port: number; name?: string; role: string; apiKey?: string; maxBody: number; backend: string }

/** `coevolve serve CHECKPOINT`: runs until SIGINT or SIGTERM, then closes its connections and exits. */
export async function serveCommand(checkpoint: string, o: ServeCommandOptions): Promise<void> {
  const apiKey = o.apiKey ?? process.env.COEVOLVE_API_KEY;
  warnIfOpen(o.host, apiKey, 'the model server');
  console.error(describeBackend(await initBackend(o.backend as BackendChoice, 'auto')));
  const loaded = await loadModel(checkpoint);
  if (loaded.kind !== 'tinylm' || !loaded.tokenizer) throw new Error(`serve: ${checkpoint} is not a language model with a tokenizer`);
  const name = o.name ?? basename(resolve(checkpoint));
  const running = await serve({ model: loaded.model, tokenizer: loaded.tokenizer, name, role: o.role, host: o.host, port: o.port, apiKey, maxBodyBytes: o.maxBody });
  console.error(`serving '${name}' at ${running.url}${apiKey ? ' (API key required)' : ''}`);
  await untilStopped(() => running.close());
}
