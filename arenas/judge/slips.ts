/** The judge arena's planted slips: one digit of a right answer changed (shared with the pretrain corpus). */
export { digitSlip } from '../../src/tasks/slips.js';
