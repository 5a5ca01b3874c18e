import 'reflect-metadata';
import { Container, inject, injectable } from 'inversify';
import { ARENA_KINDS } from '../../arenas/index.js';
import type { Arena, ArenaFactory } from '../../arenas/types.js';
import type { LiveModels } from '../../judges/grounded.js';
import { JUDGE_KINDS, type JudgeFactory } from '../../judges/registry.js';
import { ROLE_KINDS } from '../../roles/index.js';
import type { AnswerParser, Role } from '../../roles/types.js';
import type { ExperimentConfig } from '../config/schema.js';
import { TASK_FAMILIES } from '../tasks/index.js';
import type { TaskFamily } from '../tasks/types.js';
import type { Task } from '../core/types.js';

/** Things configs name: a kind resolves by name, and an unknown name lists the known ones. */
export class Registry<T> {
  constructor(readonly concept: string, private readonly entries: Readonly<Record<string, T>>) {}
  get names(): string[] {
    return Object.keys(this.entries).sort();
  }
  resolve(name: string, path: string): T {
    if (!Object.prototype.hasOwnProperty.call(this.entries, name)) {
      throw new Error(`${path}: unknown ${this.concept} '${name}'; known: ${this.names.join(', ')}`);
    }
    return this.entries[name];
  }
}

export const TOKENS = {
  arenas: Symbol.for('coevolve.arenas'),
  judges: Symbol.for('coevolve.judges'),
  roles: Symbol.for('coevolve.roles'),
  tasks: Symbol.for('coevolve.tasks'),
  models: Symbol.for('coevolve.models'),
} as const;

/** Everything a config names, resolved: the plan of an experiment before any work starts. */
export interface Plan {
  arena: Arena;
  family: TaskFamily<unknown>;
  roles: Record<string, Role>;
  judges: { judge: ReturnType<JudgeFactory>; weight: number; kind: string }[];
  /** filled in by the loop once the models exist, for judges that measure them (grounded) */
  live: LiveModels;
}

@injectable()
export class Resolver {
  constructor(
    @inject(TOKENS.arenas) private readonly arenas: Registry<ArenaFactory>,
    @inject(TOKENS.judges) private readonly judges: Registry<JudgeFactory>,
    @inject(TOKENS.roles) private readonly roles: Registry<(p: AnswerParser) => Role>,
    @inject(TOKENS.tasks) private readonly tasks: Registry<TaskFamily<unknown>>,
    @inject(TOKENS.models) private readonly models: Registry<string>,
  ) {}

  /** Resolves every name in the config, or throws naming the first unknown one. Does no work. */
  plan(c: ExperimentConfig): Plan {
    const family = this.tasks.resolve(c.tasks.family, 'tasks.family');
    family.validate(c.tasks.difficulty);
    for (const [id, m] of Object.entries(c.models)) this.models.resolve(m.kind, `models.${id}.kind`);
    const arena = this.arenas.resolve(c.arena.kind, 'arena.kind')(c.arena.options, family);
    if (c.tasks.train.source === 'none' && !arena.seedsTasks) throw new Error(`tasks.train.source: 'none' needs an arena that seeds its own tasks (a proposer writes them, a game deals them); '${arena.kind}' does not`);
    const tau = c.trainer.temperature;
    if (tau !== undefined && c.arena.temperature > 0 && tau !== c.arena.temperature) {
      throw new Error(`trainer.temperature: ${tau} differs from arena.temperature ${c.arena.temperature}; the update must score at the sampling temperature (leave it unset to follow the arena)`);
    }
    const parse: AnswerParser = (o) => family.parseAnswer(o);
    const roles = Object.fromEntries(Object.entries(c.roles).map(([id, r]) => [id, this.roles.resolve(r.kind, `roles.${id}.kind`)(parse)]));
    for (const [needed, kind] of Object.entries(arena.roles)) {
      if (!roles[needed]) throw new Error(`roles: arena '${arena.kind}' needs role '${needed}'; configured: ${Object.keys(roles).join(', ')}`);
      if (c.roles[needed].kind !== kind) throw new Error(`roles.${needed}.kind: arena '${arena.kind}' plays '${needed}' as a ${kind}, not a ${c.roles[needed].kind}`);
    }
    const live: LiveModels = {};
    const judges = c.judges.map((j, i) => {
      const make = this.judges.resolve(j.kind, `judges[${i}].kind`);
      const measure = family.measure && ((task: Task) => family.measure!(task));
      return { judge: make(j.options, { verify: (task, out) => family.verify(task, out), measure, family: family.name, live }), weight: j.weight, kind: j.kind };
    });
    return { arena, family, roles, judges, live };
  }
}

/** The container with every built-in kind; tests and plugins may rebind a registry. */
export function createContainer(): Container {
  const c = new Container();
  c.bind(TOKENS.arenas).toConstantValue(new Registry('arena', ARENA_KINDS));
  c.bind(TOKENS.judges).toConstantValue(new Registry('judge', JUDGE_KINDS));
  c.bind(TOKENS.roles).toConstantValue(new Registry('role', ROLE_KINDS));
  c.bind(TOKENS.tasks).toConstantValue(new Registry('task family', TASK_FAMILIES));
  c.bind(TOKENS.models).toConstantValue(new Registry('model kind', { tinylm: 'tinylm' }));
  c.bind(Resolver).toSelf();
  return c;
}
