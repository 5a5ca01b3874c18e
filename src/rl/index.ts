/** RL math for coevolve: advantage estimators, KL estimators, PPO losses, filters. */
export * from './whiten.js';
export * from './advantages.js';
export * from './kl.js';
export * from './loss.js';
export * from './filter.js';
