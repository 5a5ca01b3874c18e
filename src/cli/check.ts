import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { ArenaKind } from '../core/arena.js';
import type { JudgeKind } from '../core/judge.js';
import { parseOptions } from '../config/issues.js';
import { loadConfig } from '../config/load.js';
import type { ExperimentConfig } from '../config/schema.js';
import { howToMake, makeMissingBases, neededBases } from '../pretrain/bases.js';
import { preflight } from '../engine/preflight.js';
import { createContainer, evaluatorRegistry, Registry, Resolver, TOKENS } from '../registry.js';
import { loadPlugins } from '../plugins/load.js';

export interface CheckOptions {
  set: string[];
  out?: string;
}

/**
 * `coevolve run CONFIG --check`: the config with its overrides, validated and planned as `coevolve
 * run` would (every kind resolved and its options parsed, the evaluators' too), the bases it needs
 * (each present, or the pretrain config that makes it; a missing one that none makes is an error)
 * and, when every base is there, preflight (every path, checkpoint and task checked against the
 * model that reads it). Nothing is trained, made or written. Returns the plan as text; a bad
 * config throws, naming the field.
 */
export async function checkCommand(configPath: string, o: CheckOptions, root = 'configs'): Promise<string> {
  const c = loadConfig(configPath, o.set);
  const container = createContainer(await loadPlugins(c.plugins));
  const plan = container.get(Resolver).plan(c);
  const arenaOptions = parseOptions(
    container.get<Registry<ArenaKind>>(TOKENS.arenas).resolve(c.arena.kind, 'arena.kind').options,
    c.arena.options,
    'arena.options',
  );
  const judgeKinds = container.get<Registry<JudgeKind>>(TOKENS.judges);
  const judges = c.judges.map((j, i) => {
    const options = parseOptions(
      judgeKinds.resolve(j.kind, `judges.${i}.kind`).options,
      j.options,
      `judges.${i}.options`,
    );
    return `${j.kind}, weight ${j.weight}${opts(options)}`;
  });
  // evaluators are built by preflight, which reads their data; their kinds and options are checked here in any case
  const evaluatorKindsHere = evaluatorRegistry(plan.definitions, () => () => undefined);
  const evaluators = c.evaluators.map((e, i) => {
    if (c.evaluators.findIndex((x) => x.name === e.name) !== i)
      throw new Error(`evaluators.${i}.name: '${e.name}' is used twice`);
    const kind = evaluatorKindsHere.resolve(e.kind, `evaluators.${i}.kind`);
    return `${e.name}: ${e.kind}${opts(parseOptions(kind.options, e.options, `evaluators.${i}.options`))}`;
  });

  const bases = neededBases(c, root);
  const unmade = bases.filter((b) => !b.present && !b.maker);
  if (unmade.length)
    throw new Error(
      unmade
        .map(
          (b) =>
            `${fieldsNaming(c, b.folder).join(', ') || b.folder}: ${b.folder} does not exist; ${howToMake(b.folder, root)}`,
        )
        .join('\n'),
    );
  const missing = bases.filter((b) => !b.present);
  const lines = [
    `${configPath}: valid; nothing was run, made or written`,
    `run         ${c.name}: ${c.iterations} iterations, seed ${c.seed}, backend ${c.backend}, workers ${c.workers}`,
    `models      ${Object.entries(c.models)
      .map(([id, m]) => `${id}: ${m.kind}${from(m)}`)
      .join('; ')}`,
    `roles       ${Object.entries(c.roles)
      .map(
        ([id, r]) =>
          `${id}: ${r.kind} on ${r.model}${r.adapter ? ` (adapter ${r.adapter})` : ''}${r.train ? '' : ', frozen'}`,
      )
      .join('; ')}`,
    `arena       ${c.arena.kind}, groups of ${c.arena.groupSize}${opts(arenaOptions)}`,
    `tasks       ${c.tasks.family} ${flow(c.tasks.difficulty)}; train ${source(c.tasks.train)}; eval ${c.tasks.eval ? source(c.tasks.eval) : 'none'}`,
    ...column('judges', judges),
    ...column('evaluators', evaluators),
    `plugins     ${c.plugins.join(', ') || 'none'}`,
    `bases       ${bases.length ? '' : 'none'}`.trimEnd(),
    ...bases.map(
      (b) =>
        `  ${b.folder}: ${b.present ? 'present' : 'missing'}${b.maker ? `; made by coevolve pretrain ${b.maker}` : "; a run's result (no pretrain config makes it)"}`,
    ),
  ];
  if (missing.length) {
    // preflight must wait for the bases; the task files outside them are checked now
    const inMissing = (p: string) => missing.some((b) => resolve(p).startsWith(resolve(b.folder) + sep));
    for (const { at, path } of jsonlFiles(c))
      if (!inMissing(path) && !existsSync(path)) throw new Error(`${at}: ${path} does not exist`);
    // what a run would make first, in its order (a maker's own missing base, its init, before it)
    const order = await makeMissingBases(
      c,
      async () => {},
      () => {},
      root,
    );
    lines.push(
      `            a run makes them first: ${order.map((f) => `coevolve pretrain ${f}`).join(', then ')}`,
      'preflight   once the bases are made (it reads their tokenizers and checkpoints); a run does it then',
    );
  } else {
    const warnings: string[] = [];
    const checked = await preflight(c, plan, (l) => warnings.push(l));
    lines.push(
      `preflight   passed: ${count(checked.train.length, 'training task')}, ${count(checked.evalSet.length, 'eval task')}, ${count(checked.evaluators.length, 'evaluator')}`,
      ...warnings.map((w) => `  ${w}`),
    );
  }
  const dir = o.out ?? join(c.outDir, c.name);
  lines.push(
    `run dir     ${dir}${!o.out && existsSync(dir) ? ' exists: a run goes to the first free -2, -3 ... beside it' : ''}`,
  );
  return lines.join('\n');
}

const count = (n: number, thing: string) => `${n} ${thing}${n === 1 ? '' : 's'}`;

/** Options after a comma, or nothing when there are none. */
function opts(options: Record<string, unknown>): string {
  return Object.values(options).some((v) => v !== undefined) ? `, ${flow(options)}` : '';
}

/** `name` and its first item on one line, the others under it. */
function column(name: string, items: string[]): string[] {
  return (items.length ? items : ['none']).map((item, i) => `${i ? '' : name}`.padEnd(12) + item);
}

/** Where a model starts from. */
function from(m: ExperimentConfig['models'][string]): string {
  const reference = m.reference ? ', with a KL reference' : '';
  if (m.kind === 'hf')
    return ` ${m.path}${m.adapter ? ` + adapter ${m.adapter}` : ''}${m.lora ? `, LoRA r${m.lora.r}` : ''}${reference}`;
  if (m.kind === 'remote') return ` ${m.remote?.url} (${m.remote?.model})`;
  return `${m.checkpoint ? ` from ${m.checkpoint}` : ' fresh'}${reference}`;
}

function source(s: { source: string; count?: number; path?: string }): string {
  return s.source === 'file' ? `file ${s.path}` : s.source === 'generate' ? `${s.count} generated` : 'none';
}

/** The config's fields whose value is `folder` or a path inside it, as `models.main.checkpoint`. */
function fieldsNaming(value: unknown, folder: string, at = ''): string[] {
  if (typeof value === 'string') {
    const p = resolve(value);
    return p === resolve(folder) || p.startsWith(resolve(folder) + sep) ? [at] : [];
  }
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => fieldsNaming(v, folder, at ? `${at}.${k}` : k));
  return [];
}

/** Every JSONL or Parquet file the config names (task sets, evaluators' and judges' data), with its field. */
function jsonlFiles(value: unknown, at = ''): { at: string; path: string }[] {
  if (typeof value === 'string') return /\.(jsonl|parquet)$/.test(value) ? [{ at, path: value }] : [];
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => jsonlFiles(v, at ? `${at}.${k}` : k));
  return [];
}

/** A value in YAML's flow style, as configs write it: `{ digits: 2, operators: "+" }`. */
function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return entries.length ? `{ ${entries.map(([k, v]) => `${k}: ${flow(v)}`).join(', ')} }` : '{}';
  }
  if (typeof value === 'string') return /^[\w./-]+$/.test(value) ? value : JSON.stringify(value);
  return String(value);
}
