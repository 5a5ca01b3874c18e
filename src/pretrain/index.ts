/** Pretraining: how a base is made (schema, corpora, the run, evaluation, the base written out). */
export { PretrainSchema, loadPretrainConfig, parsePretrainConfig, type PretrainConfig } from './schema.js';
export { pretrainCorpus, type PretrainCorpus, type Verdict } from './corpus.js';
export { sampleProposals, type BaseEvaluation, type ProposalStats } from './evaluate.js';
export { pretrain, resumePretrain, pretrainRunDir, type PretrainOptions, type PretrainResult } from './run.js';
