import { Command, InvalidArgumentError } from 'commander';

// Every command imports what it uses when it runs: the tensor backend, BullMQ and the chart
// renderer take seconds to load, and `coevolve --help` or a config error should not wait for them.
const program = new Command('coevolve').description(
  'Self-play and multi-agent co-evolution: roles, arenas, judges and joint RL updates',
);

const nonNegativeInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative integer, got '${v}'`);
  return n;
};
const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a positive integer, got '${v}'`);
  return n;
};
const finiteNumber = (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a finite number, got '${v}'`);
  return n;
};
const collect = (v: string, acc: string[]) => [...acc, v];

program
  .command('run')
  .description('run an experiment from a YAML config, or resume a killed run')
  .argument('[config]', 'experiment YAML')
  .option('--set <key=value>', 'override a config field (repeatable), e.g. trainer.lr=3e-4', collect, [])
  .option('--resume <dir>', 'continue the run in DIR from its last checkpoint')
  .option('--out <dir>', 'run directory, new or empty (default: <outDir>/<name>)')
  .option('--fresh-optimizer', 'with --resume: restart the optimizer when the checkpoint has no usable optimizer state')
  .option(
    '--check',
    'validate and plan CONFIG (kinds and their options, the bases it needs and which pretrain config makes each, preflight) and exit without running',
  )
  .action(
    async (
      config: string | undefined,
      o: { set: string[]; resume?: string; out?: string; freshOptimizer?: boolean; check?: boolean },
    ) => {
      // the schema is checked before the engine (tensors, queues) loads, so a config error answers at once
      if (config && !o.resume) (await import('../config/load.js')).loadConfig(config, o.set);
      if (o.check) {
        if (!config || o.resume || o.freshOptimizer)
          throw new Error('run --check: give a CONFIG file (and no --resume or --fresh-optimizer)');
        const { checkCommand } = await import('./check.js');
        console.log(await checkCommand(config, o));
        return;
      }
      const { runCommand } = await import('./run.js');
      await runCommand(config, o);
    },
  );

program
  .command('eval')
  .description('pass@1 (greedy) and maj@N of a checkpoint on a JSONL task file')
  .requiredOption(
    '--checkpoint <dir>',
    'a saved model: a TinyLM checkpoint, a Hugging Face directory (a merged export too) or a run checkpoint of one',
  )
  .option('--adapter <dir>', 'a PEFT LoRA adapter on the Hugging Face directory')
  .requiredOption('--data <file>', 'JSONL, one {"prompt","answer"} per line')
  .option('--family <name>', 'task family that parses and verifies answers', 'arithmetic')
  .option(
    '--plugin <module>',
    'a plugin that defines the task family: a path from the working directory or a package (repeatable)',
    collect,
    [],
  )
  .option('--samples <n>', 'answers sampled per task for maj@N (0 skips)', nonNegativeInt, 16)
  .option('--temperature <t>', 'sampling temperature for maj@N', finiteNumber, 1)
  .option('--seed <n>', 'sampling seed for maj@N', nonNegativeInt, 0)
  .option('--max-new-tokens <n>', 'longest answer', positiveInt, 8)
  .option(
    '--stop <text>',
    'a stop string: an answer ends once its text holds it, cut before it (repeatable)',
    collect,
    [],
  )
  .option('--backend <name>', 'auto | gpu | node | wasm | cpu', 'auto')
  .option('--accelerate <mode>', 'auto (native matrix products when a library loads) | off', 'auto')
  .option(
    '--workers <n>',
    'threads that generate, each with a replica of the model: auto (one per core) or a count',
    'auto',
  )
  .action(async (o) => {
    const { evalCommand } = await import('./eval.js');
    console.log(JSON.stringify(await evalCommand(o)));
  });

program
  .command('generate')
  .description(
    'one completion of a model: a Hugging Face directory (--adapter: a PEFT adapter on it), a run checkpoint or a TinyLM checkpoint',
  )
  .argument('<model>', 'the model directory')
  .option('--adapter <dir>', 'a PEFT LoRA adapter directory to apply')
  .option('--prompt <text>', 'the prompt as text (tokenized as transformers tokenizes it)')
  .option('--prompt-ids <ids>', 'the prompt as token ids, e.g. 1,2,3')
  .option('--chat', 'render --prompt as a user message through the chat template, with the generation prompt')
  .option('--max-new-tokens <n>', 'most new tokens', positiveInt, 32)
  .option(
    '--stop <text>',
    'a stop string: generation ends once the text holds it, cut before it (repeatable)',
    collect,
    [],
  )
  .option('--temperature <t>', '0 is greedy', finiteNumber, 0)
  .option('--seed <n>', 'sampling seed', nonNegativeInt, 0)
  .option('--json', 'print {"ids", "logprobs", "text"} on one line')
  .option('--backend <name>', 'auto | gpu | node | wasm | cpu', 'auto')
  .action(async (model: string, o) => {
    const { generateCommand } = await import('./generate.js');
    console.log(await generateCommand(model, o));
  });

program
  .command('merge')
  .description(
    'merge a LoRA adapter into its Hugging Face base and write a plain Hugging Face directory (transformers and vLLM load it without PEFT)',
  )
  .argument('<model>', 'the base directory, or a run checkpoint of an adapter (its base is the one it records)')
  .option('--adapter <dir>', "a PEFT adapter directory (default: the run checkpoint's own adapter)")
  .requiredOption('--out <dir>', 'the directory to write (absent or empty)')
  .action(async (model: string, o: { adapter?: string; out: string }) => {
    const [{ openModel }, { writeMerged }, { existsSync, readdirSync }] = await Promise.all([
      import('../models/open.js'),
      import('../models/hf/merge.js'),
      import('node:fs'),
    ]);
    if (existsSync(o.out) && readdirSync(o.out).length)
      throw new Error(`merge: --out ${o.out} exists and is not empty`);
    await (await import('../backend/index.js')).initBackend('auto');
    const opened = await openModel(model, o.adapter);
    if (opened.kind !== 'hf' || !opened.policy.adapter)
      throw new Error(`merge: ${model} is not a Hugging Face model with an adapter (give --adapter)`);
    writeMerged(o.out, opened.policy.base, opened.policy.adapter);
    console.log(JSON.stringify({ out: o.out }));
  });

program
  .command('tasks')
  .description('write a seeded set of distinct tasks as JSONL ({"prompt","answer"} per line)')
  .requiredOption('--out <file>', 'where to write')
  .option('--family <name>', 'task family', 'arithmetic')
  .option(
    '--plugin <module>',
    'a plugin that defines the task family: a path from the working directory or a package (repeatable)',
    collect,
    [],
  )
  .option('--difficulty <json>', 'difficulty as JSON', '{}')
  .option('--count <n>', 'how many tasks', positiveInt, 256)
  .option('--seed <n>', 'generator seed', nonNegativeInt, 0)
  .option('--overwrite', 'replace --out if it exists')
  .option(
    '--exclude-pretrain <config>',
    "skip every prompt of this pretraining config's corpus and held-out set (repeatable)",
    collect,
    [],
  )
  .option('--exclude <file>', 'skip every prompt of this JSONL task file (repeatable)', collect, [])
  .action(async (o) => {
    const [{ tasksCommand }, { resolveTaskFamily }] = await Promise.all([
      import('./tasks.js'),
      import('../registry.js'),
    ]);
    console.log(JSON.stringify(tasksCommand(o, await resolveTaskFamily(o.family, o.plugin, '--family'))));
  });

program
  .command('reward')
  .description(
    "score a JSONL of {completion, answer} rows (and any fields the family reads) with a task family's verifier: one JSON line per row",
  )
  .argument('<file>', 'the JSONL file')
  .requiredOption('--family <name>', 'the task family whose verifier scores, e.g. math or countdown')
  .option(
    '--plugin <module>',
    'a plugin that defines the task family: a path from the working directory or a package (repeatable)',
    collect,
    [],
  )
  .action(async (file: string, o) => {
    const [{ rewardCommand }, { resolveTaskFamily }] = await Promise.all([
      import('./reward.js'),
      import('../registry.js'),
    ]);
    for (const row of rewardCommand(file, await resolveTaskFamily(o.family, o.plugin, '--family')))
      console.log(JSON.stringify(row));
  });

program
  .command('report')
  .description(
    'print the curves of runs as tables; with --out, also write an HTML report and PNG and SVG charts, the runs overlaid',
  )
  .argument('<dirs...>', 'run directories')
  .option('--keys <list>', 'comma-separated metric names for the tables (default: eval metrics)')
  .option('--out <dir>', 'write index.html and a PNG and an SVG per chart here')
  .action(async (dirs: string[], o: { keys?: string; out?: string }) => {
    const { reportCommand } = await import('../report/text.js');
    for (const dir of dirs)
      console.log((dirs.length > 1 ? `# ${dir}\n` : '') + (await reportCommand(dir, o.keys?.split(','))));
    if (o.out) {
      const { writeReport } = await import('../report/index.js');
      const written = await writeReport(dirs, o.out);
      console.error(`report: ${written.html} (${written.charts.length} charts)`);
    }
  });

program
  .command('export')
  .description(
    'write every turn of a run as JSONL (prompt, completion, role, group, reward, advantage...), the columns TRL and verl read; see docs/export.md',
  )
  .argument('<dir>', 'run directory (read only)')
  .requiredOption('--out <file>', 'the JSONL file to write (must not exist)')
  .option(
    '--chat',
    "prompt and completion as conversations (TRL's conversational format): the system and user messages a chat model was shown, and its answer",
  )
  .action(async (dir: string, o: { out: string; chat?: boolean }) => {
    const { exportRun } = await import('../export/trajectories.js');
    console.log(JSON.stringify({ out: o.out, rows: await exportRun(dir, o.out, { chat: o.chat === true }) }));
  });

program
  .command('worker')
  .description(
    'a rollout worker: plays the rollout jobs of a run on a BullMQ queue (rollout.engine: redis) and returns the episodes',
  )
  .requiredOption('--redis <url>', 'redis://[:password@]host:port (keep Redis off public interfaces)')
  .option('--queue <name>', "the queue (the run's rollout.queue)", 'coevolve')
  .option('--plugin <module>', 'a plugin whose kinds this worker may play (repeatable)', collect, [])
  .option('--backend <name>', 'auto | gpu | node | wasm | cpu', 'auto')
  .option('--accelerate <mode>', 'auto (native matrix products when a library loads) | off', 'auto')
  .option(
    '--base <from=to>',
    "a Hugging Face base the run's config names at FROM (or under it) is read from TO on this machine (repeatable); it must hash as the learner's",
    collect,
    [],
  )
  .option('--threads <n>', 'native matrix-product threads (default 1: one worker per core)', positiveInt)
  .option('--lock-ms <n>', "a job's lock: a killed worker's job goes to another once it expires", positiveInt, 60000)
  .option('--stalled-ms <n>', 'how often stalled jobs are looked for', positiveInt, 15000)
  .option(
    '--max-stalled <n>',
    'times a job may stall before it fails as stalled (the learner then queues it again, up to rollout.jobRetries)',
    nonNegativeInt,
    3,
  )
  .action(
    async (o: {
      redis: string;
      queue: string;
      plugin: string[];
      backend: string;
      accelerate: string;
      base: string[];
      threads?: number;
      lockMs: number;
      stalledMs: number;
      maxStalled: number;
    }) => {
      if (o.accelerate !== 'auto' && o.accelerate !== 'off')
        throw new Error(`worker: --accelerate must be auto or off, got '${o.accelerate}'`);
      const [{ startWorker }, { untilStopped }] = await Promise.all([import('./worker.js'), import('./lifetime.js')]);
      const w = await startWorker({
        redis: o.redis,
        queue: o.queue,
        plugins: o.plugin,
        backend: o.backend,
        accelerate: o.accelerate,
        bases: o.base,
        threads: o.threads,
        lockMs: o.lockMs,
        stalledMs: o.stalledMs,
        maxStalled: o.maxStalled,
      });
      await untilStopped(() => w.close());
    },
  );

program
  .command('dashboard')
  .description(
    'a local page: the runs under a folder, live charts of a running experiment, and an episode browser (reads only)',
  )
  .option('--runs <dir>', 'the folder of runs', 'runs')
  .option('--host <host>', 'address to bind (keep it on loopback unless the API key is set)', '127.0.0.1')
  .option('--port <n>', 'port (0 picks a free one)', nonNegativeInt, 8080)
  .option('--api-key <key>', 'require the key: a bearer token, or ?key= in the page URL (default: $COEVOLVE_API_KEY)')
  .action(async (o: { runs: string; host: string; port: number; apiKey?: string }) => {
    const apiKey = o.apiKey ?? process.env.COEVOLVE_API_KEY;
    const [{ startDashboard }, { untilStopped, warnIfOpen }] = await Promise.all([
      import('../dashboard/server.js'),
      import('./lifetime.js'),
    ]);
    warnIfOpen(o.host, apiKey, 'the dashboard (every run)');
    const d = await startDashboard({ root: o.runs, host: o.host, port: o.port, apiKey });
    console.error(`dashboard of ${o.runs} at ${d.url}${apiKey ? '?key=<key>' : ''}`);
    await untilStopped(() => d.close());
  });

program
  .command('serve')
  .description(
    "serve a model through OpenAI's API: /v1/models, /v1/completions (text or token ids), /v1/chat/completions (the chat template), logprobs, streaming",
  )
  .argument('<model>', 'a TinyLM checkpoint, a Hugging Face model directory, or a run checkpoint of one')
  .option('--adapter <dir>', 'a PEFT LoRA adapter directory to apply (Hugging Face models)')
  .option(
    '--enable-lora',
    "vLLM's runtime LoRA routes: POST /v1/load_lora_adapter {lora_name, lora_path} and /v1/unload_lora_adapter (PEFT directories on this machine, named as `model`)",
  )
  .option('--host <host>', 'address to bind (keep it on loopback unless the API key is set)', '127.0.0.1')
  .option('--port <n>', 'port (0 picks a free one)', nonNegativeInt, 8000)
  .option('--name <id>', "the model id clients name (default: the checkpoint folder's name)")
  .option('--role <role>', 'the role token prompts start with', 'solver')
  .option('--api-key <key>', 'require Authorization: Bearer <key> (default: $COEVOLVE_API_KEY)')
  .option('--max-body <bytes>', 'largest request body', positiveInt, 1 << 20)
  .option('--backend <name>', 'auto | gpu | node | wasm | cpu', 'auto')
  .action(
    async (
      checkpoint: string,
      o: {
        host: string;
        port: number;
        name?: string;
        role: string;
        apiKey?: string;
        maxBody: number;
        backend: string;
        adapter?: string;
        enableLora?: boolean;
      },
    ) => {
      const { serveCommand } = await import('./serve.js');
      await serveCommand(checkpoint, o);
    },
  );

program
  .command('export-policy')
  .description("write a game run's policy as a table: information-state key -> move -> probability")
  .argument('<dir>', 'run directory of a game arena')
  .requiredOption('--out <file>', 'the JSON file to write')
  .option('--iteration <n>', 'the checkpoint of this iteration instead of the last', (v) => {
    if (!/^\d+$/.test(v)) throw new Error(`--iteration: a whole number, got '${v}'`);
    return Number(v);
  })
  .action(async (dir: string, o: { out: string; iteration?: number }) => {
    const { exportPolicyCommand } = await import('./export-policy.js');
    console.log(JSON.stringify(await exportPolicyCommand(dir, o)));
  });

program
  .command('study')
  .description('run every condition x seed of a study file that has not finished, then print and write its summary')
  .argument('<file>', 'study YAML: conditions (configs and overrides), seeds, the metric compared')
  .option('--only <names>', 'these conditions only, comma-separated')
  .option('--summary', 'print the summary of what has finished, starting nothing')
  .action(async (file: string, o: { only?: string; summary?: boolean }) => {
    const { studyCommand } = await import('./study.js');
    process.exitCode = await studyCommand(file, { only: o.only?.split(','), summaryOnly: o.summary });
  });

program
  .command('pretrain')
  .description(
    'make a base by supervised training, as a run: curves and resumable checkpoints in runs/pretrain/<name>, the base in out:',
  )
  .argument('[config]', 'pretrain YAML')
  .option('--resume <dir>', 'continue the pretrain run in DIR from its last checkpoint')
  .option('--out <dir>', 'run directory, new or empty (default: <outDir>/pretrain/<name>)')
  .option('--fresh', 'start a new run even if an unfinished run of this config exists (it is resumed by default)')
  .option('--overwrite', 'replace the out: folder even if it holds files that are not a checkpoint')
  .action(
    async (config: string | undefined, o: { resume?: string; out?: string; fresh?: boolean; overwrite?: boolean }) => {
      // the schema is checked before the engine loads, so a config error answers at once
      if (config && !o.resume) (await import('../pretrain/schema.js')).loadPretrainConfig(config);
      const { pretrainCommand } = await import('./pretrain.js');
      console.log(JSON.stringify(await pretrainCommand(config, o)));
    },
  );

program.parseAsync().catch((err: Error) => {
  // a RangeError or TypeError is a fault in coevolve, not in the input: its stack says where
  if (err instanceof RangeError || err instanceof TypeError) console.error(err.stack);
  console.error(`coevolve: ${err.message}`);
  process.exit(1);
});
