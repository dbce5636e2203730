/**
 * `@seqline/bus/local`: the in-process work queue and push bus of embedded mode, without the
 * NATS adapters the package root also exports — importing this entry never loads @nats-io.
 */
export { createLocalWorkQueue } from './local-work-queue.ts';
export type { LocalWorkQueue, LocalWorkQueueOptions } from './local-work-queue.ts';
export { createLocalPushBus } from './local-push-bus.ts';
export type { LocalPushBusOptions } from './local-push-bus.ts';
export { backoffDelay, DEFAULT_BACKOFF } from './backoff.ts';
export type { BackoffPolicy } from './backoff.ts';
export type { QueueStats } from './queue-common.ts';
