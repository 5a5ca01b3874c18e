/**
 * The mechanism of kinds: a registry of one concept's kinds by name, and the resolver that
 * turns a config's names into a plan. What kinds there are is src/registry.ts's business.
 */
import { parseOptions } from '../config/issues.js';
import type { ExperimentConfig } from '../config/schema.js';
import type { Arena, ArenaKind } from '../core/arena.js';
import type { JudgeFactory, JudgeKind, LiveModels } from '../core/judge.js';
import type { AnswerParser, Role } from '../core/role.js';
import type { Task } from '../core/types.js';
import type { PluginDefinition } from '../plugins/definition.js';
import type { TaskFamily } from '../core/task-family.js';

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
 * Resolves a config's names against the registries and checks them against each other (a
 * family for its arenas, the arena's roles bound to roles of the right kind, each kind's
 * options parsed at its path). The container of src/registry.ts builds it.
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
