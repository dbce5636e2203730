// Preloaded (NODE_OPTIONS=--import) into a child server by the edit crash test: the first time
// a job whose id starts with SEQLINE_TEST_KILL_AT_JOB is about to be stored, the process
// SIGKILLs itself — a kill -9 exactly between an op's own append and the enqueue of its fanout.
import { register } from 'node:module';

const prefix = process.env.SEQLINE_TEST_KILL_AT_JOB;
if (prefix === undefined || prefix === '') throw new Error('kill-at-enqueue: set SEQLINE_TEST_KILL_AT_JOB');
register('./kill-at-enqueue-hooks.mjs', import.meta.url, { data: { prefix } });
