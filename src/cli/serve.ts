import { basename, resolve } from 'node:path';
import { describeBackend, initBackend, type BackendChoice } from '../backend/index.js';
import { openModel } from '../models/open.js';
import { servedHf, servedTinyLM } from '../openai/served.js';
import { serve } from '../openai/server.js';
import { untilStopped, warnIfOpen } from './lifetime.js';

export interface ServeCommandOptions {
  host: string;
  port: number;
  name?: string;
  role: string;
  apiKey?: string;
  maxBody: number;
  backend: string;
  adapter?: string;
  enableLora?: boolean;
}

/** `coevolve serve MODEL [--adapter DIR]` (a TinyLM checkpoint, a Hugging Face directory or a run checkpoint of one): runs until SIGINT or SIGTERM, then closes its connections and exits. */
export async function serveCommand(checkpoint: string, o: ServeCommandOptions): Promise<void> {
  const apiKey = o.apiKey ?? process.env.COEVOLVE_API_KEY;
  warnIfOpen(o.host, apiKey, 'the model server');
  console.error(describeBackend(await initBackend(o.backend as BackendChoice, 'auto')));
  const opened = await openModel(checkpoint, o.adapter).catch((e: Error) => {
    throw new Error(`serve: ${e.message}`);
  });
  const served =
    opened.kind === 'hf'
      ? servedHf(opened.policy, opened.tokenizer, checkpoint)
      : servedTinyLM(opened.model, opened.tokenizer, o.role);
  const name = o.name ?? basename(resolve(checkpoint));
  if (o.enableLora && opened.kind !== 'hf') throw new Error('serve: --enable-lora applies to Hugging Face models');
  const running = await serve({
    served,
    name,
    host: o.host,
    port: o.port,
    apiKey,
    maxBodyBytes: o.maxBody,
    runtimeLora: o.enableLora === true,
    log: (line) => console.error(line),
  });
  console.error(
    `serving '${name}' at ${running.url}${apiKey ? ' (API key required)' : ''}${o.enableLora ? ' (runtime LoRA loading on)' : ''}`,
  );
  await untilStopped(() => running.close());
}
