import 'reflect-metadata';
import { Container } from 'inversify';
import { ARENA_KINDS } from '../../arenas/index.js';
import type { Arena, ArenaKind } from '../core/arena.js';
import { parseOptions } from '../config/issues.js';
import type { LiveModels } from '../core/judge.js';
import { JUDGE_KINDS, type JudgeFactory, type JudgeKind } from '../../judges/registry.js';
import { ROLE_KINDS } from '../../roles/index.js';
import type { AnswerParser, Role } from '../core/role.js';
import type { ExperimentConfig } from '../config/schema.js';
import { TASK_FAMILIES } from '../tasks/index.js';
import type { TaskFamily } from '../tasks/types.js';
import type { Task } from '../core/types.js';
import type { Definition } from '../plugins/define.js';
import { loadPlugins, type PluginDefinition } from '../plugins/load.js';

/**
 * Things configs name: a kind resolves by name, and an unknown name lists the known ones
 * (plugins' included). Each name is taken once: a second claim names both claimants.
 */
export class Registry<T> {
  private readonly entries = new Map<string, { value: T; source: string }>();

  constructor(
    readonly concept: string,
    builtIn: Readonly<Record<string, T>> = {},
  ) {
    for (const [name, value] of Object.entries(builtIn)) this.add(name, value, 'built in');
  }

  /** Registers `name`; `source` says who did ('plugin ./x.ts', or 'built in'). */
  add(name: string, value: T, source: string): this {
    const taken = this.entries.get(name);
    if (taken)
      throw new Error(
        `${source}: ${this.concept} '${name}' is already taken (${taken.source === 'built in' ? 'a built-in kind' : `by ${taken.source}`})`,
      );
    this.entries.set(name, { value, source });
    return this;
  }

  /** Registers each definition of this registry's concept. */
  addAll(definitions: readonly PluginDefinition[]): this {
    for (const d of definitions) if (d.concept === this.concept) this.add(d.name, d.value as T, d.source);
    return this;
  }

  get names(): string[] {
    return [...this.entries.keys()].sort();
  }

  resolve(name: string, path: string): T {
    const found = this.entries.get(name);
    if (!found) throw new Error(`${path}: unknown ${this.concept} '${name}'; known: ${this.names.join(', ')}`);
    return found.value;
  }
}

export const TOKENS = {
  arenas: Symbol.for('coevolve.arenas'),
  judges: Symbol.for('coevolve.judges'),
  roles: Symbol.for('coevolve.roles'),
  tasks: Symbol.for('coevolve.tasks'),
  models: Symbol.for('coevolve.models'),
  definitions: Symbol.for('coevolve.definitions'),
} as const;

/** Everything a config names, resolved: the plan of an experiment before any work starts. */
export interface Plan {
  arena: Arena;
  family: TaskFamily<unknown>;
  roles: Record<string, Role>;
  judges: { judge: ReturnType<JudgeFactory>; weight: number; kind: string }[];
  /** filled in by the loop once the models exist, for judges that measure them (grounded) */
  live: LiveModels;
  /** what the config's plugins define (their evaluators are built with the run's evaluators) */
  definitions: readonly PluginDefinition[];
}

/**
 * Resolves a config's names against the registries. Bound by a factory, not decorators: the
 * package runs through tsx under whatever tsconfig its user has, and parameter decorators
 * compile only with experimentalDecorators.
 */
export class Resolver {
  constructor(
    private readonly arenas: Registry<ArenaKind>,
    private readonly judges: Registry<JudgeKind>,
    private readonly roles: Registry<(p: AnswerParser) => Role>,
    private readonly tasks: Registry<TaskFamily<unknown>>,
    private readonly models: Registry<string>,
    private readonly definitions: readonly PluginDefinition[],
  ) {}

  /** Resolves every name in the config, or throws naming the first unknown one. Does no work. */
  plan(c: ExperimentConfig): Plan {
    const family = this.tasks.resolve(c.tasks.family, 'tasks.family');
    family.validate(c.tasks.difficulty, 'tasks.difficulty');
    for (const [id, m] of Object.entries(c.models)) this.models.resolve(m.kind, `models.${id}.kind`);
    const arenaKind = this.arenas.resolve(c.arena.kind, 'arena.kind');
    // a family may be for some arenas only (a dialogue's prompt is for the memory arena to take apart)
    if (family.arenas && !family.arenas.includes(c.arena.kind))
      throw new Error(
        `arena.kind: arena '${c.arena.kind}' does not serve task family '${family.name}': its tasks are for ${family.arenas.join(', ')}`,
      );
    const arena = arenaKind.make(parseOptions(arenaKind.options, c.arena.options, 'arena.options'), family);
    if (c.tasks.train.source === 'none' && !arena.seedsTasks)
      throw new Error(
        `tasks.train.source: 'none' needs an arena that seeds its own tasks (a proposer writes them, a game deals them); '${arena.kind}' does not`,
      );
    const tau = c.trainer.temperature;
    if (tau !== undefined && c.arena.temperature > 0 && tau !== c.arena.temperature) {
      throw new Error(
        `trainer.temperature: ${tau} differs from arena.temperature ${c.arena.temperature}; the update must score at the sampling temperature (leave it unset to follow the arena)`,
      );
    }
    const parse: AnswerParser = (o) => family.parseAnswer(o);
    const roles = Object.fromEntries(
      Object.entries(c.roles).map(([id, r]) => [id, this.roles.resolve(r.kind, `roles.${id}.kind`)(parse)]),
    );
    for (const [needed, kind] of Object.entries(arena.roles)) {
      if (!roles[needed])
        throw new Error(
          `roles: arena '${arena.kind}' needs role '${needed}'; configured: ${Object.keys(roles).join(', ')}`,
        );
      if (c.roles[needed].kind !== kind)
        throw new Error(
          `roles.${needed}.kind: arena '${arena.kind}' plays '${needed}' as a ${kind}, not a ${c.roles[needed].kind}`,
        );
    }
    const live: LiveModels = {};
    const judges = c.judges.map((j, i) => {
      const judgeKind = this.judges.resolve(j.kind, `judges.${i}.kind`);
      const measure = family.measure && ((task: Task) => family.measure!(task));
      const options = parseOptions(judgeKind.options, j.options, `judges.${i}.options`);
      return {
        judge: judgeKind.make(options, {
          verify: (task, out) => family.verify(task, out),
          measure,
          family: family.name,
          live,
        }),
        weight: j.weight,
        kind: j.kind,
      };
    });
    return { arena, family, roles, judges, live, definitions: this.definitions };
  }
}

/**
 * The container with every built-in kind and what `definitions` (loaded plugins) add; a
 * name taken twice throws here, before any work, naming the plugin.
 */
export function createContainer(definitions: readonly PluginDefinition[] = []): Container {
  const c = new Container();
  c.bind(TOKENS.arenas).toConstantValue(new Registry('arena', ARENA_KINDS).addAll(definitions));
  c.bind(TOKENS.judges).toConstantValue(new Registry('judge', JUDGE_KINDS).addAll(definitions));
  c.bind(TOKENS.roles).toConstantValue(new Registry('role', ROLE_KINDS).addAll(definitions));
  c.bind(TOKENS.tasks).toConstantValue(new Registry('task family', TASK_FAMILIES).addAll(definitions));
  c.bind(TOKENS.models).toConstantValue(
    new Registry('model kind', { tinylm: 'tinylm', hf: 'hf', remote: 'remote', mlp: 'mlp' }),
  );
  c.bind(TOKENS.definitions).toConstantValue(definitions);
  c.bind(Resolver).toDynamicValue(
    (ctx) =>
      new Resolver(
        ctx.get(TOKENS.arenas),
        ctx.get(TOKENS.judges),
        ctx.get(TOKENS.roles),
        ctx.get(TOKENS.tasks),
        ctx.get(TOKENS.models),
        ctx.get(TOKENS.definitions),
      ),
  );
  return c;
}

/** The task family `name`, built in or from one of `plugins` (for commands that need a family and nothing else, such as pretrain). */
export async function resolveTaskFamily(
  name: string,
  plugins: readonly string[],
  path = 'task.family',
): Promise<TaskFamily<unknown>> {
  return new Registry<TaskFamily<unknown>>('task family', TASK_FAMILIES)
    .addAll(await loadPlugins(plugins))
    .resolve(name, path);
}

/** Loads the config's plugins, adds `extra` definitions (a script's own), and resolves every name in the config: the plan, before any work. */
export async function planExperiment(c: ExperimentConfig, extra: readonly Definition[] = []): Promise<Plan> {
  const definitions = [
    ...(await loadPlugins(c.plugins)),
    ...extra.map((d) => ({ ...d, source: 'the definitions given to runExperiment' })),
  ];
  return createContainer(definitions).get(Resolver).plan(c);
}
