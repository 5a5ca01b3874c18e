/**
 * The plain-JSON records that cross boundaries: tasks, turns, episodes, rewards. No tensor
 * ever appears here; streams, judges, stores and reports all see only these.
 */

/** Agent ids are strings (PettingZoo's habit): 'solver', 'proposer', ... */
export type RoleId = string;

/** A task as it comes from a dataset, a generator or a proposer. */
export interface Task {
  /** unique within a run, e.g. 'arith-000123' */
  id: string;
  /** the task family that made it and can verify it, e.g. 'arithmetic' */
  family: string;
  /** what the solver sees */
  prompt: string;
  /** the reference answer; absent for unlabeled data (label-free RL never reads it for rewards) */
  answer?: string;
  /** what supervised training teaches as the completion when it is more than the answer (working) */
  target?: string;
  /**
   * the system message its dataset gave it (a chat-format prompt's system turn, or a mapped
   * column): shown to the role that answers it when that role's config sets no `system`
   */
  system?: string;
  /**
   * the dataset row's other columns, plain JSON (countdown's `nums`, a GSM8K row's extra
   * fields): what a family's verifier and reward functions read beside the answer, as TRL
   * passes a dataset's columns to its reward functions
   */
  fields?: Record<string, unknown>;
}

/** What a role made of its model's output. */
export interface Action {
  /** false when the output did not parse: an invalid action, never a crash */
  valid: boolean;
  /** the parsed value (e.g. the answer string); null when invalid */
  value: string | null;
  /** why it did not parse */
  error?: string;
}

/** One model call inside an episode. */
export interface Turn {
  index: number;
  role: RoleId;
  /** id of the model that produced it */
  model: string;
  /** token ids of the prompt (role token included) and of the completion; for a policy that reads numbers (kind mlp), the feature vector and `[action]` */
  prompt: number[];
  completion: number[];
  /** for a policy that reads numbers: which actions were legal (the mask it acted under, and is scored under) */
  legal?: boolean[];
  /** the decision point this turn acted at, when the arena names one (a game's information state): per-state baselines and critics key on it */
  state?: string;
  /** per completion token: log-prob when sampled, entropy and self-certainty of the distribution */
  logProbs: number[];
  entropy: number[];
  selfCertainty: number[];
  /** the completion decoded to text */
  text: string;
  /** when the model spoke through a chat template: the system and user messages its prompt rendered (exports write them as a conversation) */
  chat?: { system: string; user: string };
  action: Action;
  /** the task this turn acted on, when it is not the episode's (a solver on a proposed task) */
  task?: Task;
  /** which turns its advantage is computed against (default 'group'); see comparisonGroup */
  compare?: CompareScope;
  /** true when the completion was given (ActOptions.given), not sampled: its entropy and self-certainty are zeros, and accuracy metrics leave it out */
  given?: boolean;
  /** the temperature it was sampled at when its arena chose one (ActOptions.temperature): data for other turns, never trained */
  temperature?: number;
  /** the arena's own outcome for this turn alone, when it has one (a re-rollout's result); the `outcome` judge prefers it to the episode's; null: the turn earns no outcome (the judge abstains) */
  outcome?: number | null;
  /**
   * true when its reward is its episode's one outcome, paid to each of the role's turns in it
   * (a flow's planner turns): group advantages count the episode once, not once per turn
   */
  broadcast?: boolean;
  /** as stored: the reward the judges gave it, combined by weight (absent when every judge abstained) */
  reward?: number;
  /** as stored: the advantage it was trained with, the mean over its completion tokens (every token's, for outcome estimators); absent when its role did not train */
  advantage?: number;
  /** as stored, for rollouts played by a worker: how many versions behind the learner's its model's weights were */
  staleness?: number;
  /** as stored, for a stale turn that trained: the truncated importance weight of each completion token (rl/rollout-is.ts) */
  isWeights?: number[];
}

/**
 * A turn's comparison group, named by the arena: the same role's turns in the same episode
 * (G solver attempts at one proposed task), in the same group (the G episodes played on one
 * task: today's default), in the whole batch (one seat across a batch of games), or in a
 * named part of one episode, `episode:<name>` (the G alternative operations a memory manager
 * tried from one memory state), or a named part of the batch, `batch:<name>` (the turns of one
 * kind of state across the batch: a baseline per kind, which stays unbiased as long as the
 * kind does not depend on the turn's own action).
 */
export type CompareScope = 'episode' | 'group' | 'batch' | `episode:${string}` | `batch:${string}`;

/** One played episode. `group` ties together the G episodes played on the same task. */
export interface Episode {
  id: string;
  group: string;
  task: Task;
  turns: Turn[];
  /** position in its group (0..G-1), set by playGroups: episodes end out of order */
  member?: number;
  /** the arena's own outcome per role (e.g. zero-sum game results), if it has one */
  outcome?: Record<RoleId, number>;
  /** what else the arena wants judges, metrics and the store to see (a proposal, its difficulty), plain JSON */
  info?: Record<string, unknown>;
}

/** A reward for one turn; null means the judge abstains. */
export type Reward = number | null;

/** Per episode, per turn rewards for a batch: rewards[e][t] belongs to batch[e].turns[t]. */
export type BatchRewards = Reward[][];
