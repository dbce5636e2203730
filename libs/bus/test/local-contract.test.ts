import { localDeviceBus, silentLogger } from '@seqline/core';
import { deviceBusContract, pushBusContract, workQueueContract } from '@seqline/testing';
import { createLocalPushBus, createLocalWorkQueue } from '../src/index.ts';
import { MemoryJobStore } from './memory-job-store.ts';

// One store for the whole suite: every open() is "the same process after a restart".
const jobs = new MemoryJobStore();
const fastBackoff = { initialMs: 20, maxMs: 100, giveUpAfterMs: 600 };

workQueueContract('local on a JobStore double', () => createLocalWorkQueue({ jobs, logger: silentLogger, backoff: fastBackoff }));
pushBusContract('local', () => createLocalPushBus());
deviceBusContract('local', {
  open: async (holder, { logger, maxWaitMs }) => ({ bus: localDeviceBus(holder, { logger, maxWaitMs }), delay: () => undefined }),
  cleanup: async () => undefined,
});
