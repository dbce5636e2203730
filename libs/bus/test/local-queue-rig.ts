/** Shared by the local work queue's test files: a clock moved by hand, and queues closed after each test. */
import { afterEach } from 'vitest';
import { silentLogger } from '@seqline/core';
import type { Clock, WorkQueue } from '@seqline/core';
import { createLocalWorkQueue } from '../src/index.ts';
import type { LocalWorkQueue, LocalWorkQueueOptions } from '../src/index.ts';
import type { MemoryJobStore } from './memory-job-store.ts';

/** A clock that moves only when told to (backoff delays still elapse in real time). */
export class ManualClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
}

/** Call inside a describe: returns a maker of local queues, each closed after its test. */
export function useLocalQueues(): (options: Partial<LocalWorkQueueOptions> & { jobs: MemoryJobStore }) => LocalWorkQueue {
  const open: WorkQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((wq) => wq.close()));
  });
  return (options) => {
    const wq = createLocalWorkQueue({ logger: silentLogger, ...options });
    open.push(wq);
    return wq;
  };
}
