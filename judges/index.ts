/** Judges for coevolve: reward sources that turn a group of episodes into per-turn rewards. */
export * from '../src/core/judge.js';
export * from './verifier.js';
export * from './majority.js';
export * from './self-certainty.js';
export * from './learnability.js';
export * from './uncertainty.js';
export * from './coverage.js';
export * from './grounded.js';
export * from '../src/core/combine.js';
export * from './peer.js';
export * from './format.js';
export * from './function.js';
