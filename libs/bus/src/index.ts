export { createLocalWorkQueue } from './local-work-queue.ts';
export type { LocalWorkQueue, LocalWorkQueueOptions } from './local-work-queue.ts';
export { createLocalPushBus } from './local-push-bus.ts';
export type { LocalPushBusOptions } from './local-push-bus.ts';
export {
  attemptsSpanning,
  backoffDelay,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_CRASHED_DELIVERIES,
  deliveryVerdict,
  failuresBeforeGivingUp,
  retryDelayFloors,
} from './backoff.ts';
export type { BackoffPolicy, DeliveryVerdict } from './backoff.ts';
export { KeyedDispatcher } from './keyed-dispatcher.ts';
export type { DispatchLimits } from './keyed-dispatcher.ts';
export type { QueueStats } from './queue-common.ts';
export { createNatsWorkQueue } from './nats-work-queue.ts';
export { DEFAULT_NATS_BACKOFF_MS } from './nats-work-queue-options.ts';
export type { NatsWorkQueue, NatsWorkQueueOptions } from './nats-work-queue.ts';
export { createNatsPushBus } from './nats-push-bus.ts';
export type { NatsPushBus, NatsPushBusOptions, PushBusStats } from './nats-push-bus.ts';
export { subjectToken, fromSubjectToken } from './subject-token.ts';
export { isNatsUnavailable, natsError } from './nats-unavailable.ts';
export { createNatsDeviceBus } from './nats-device-bus.ts';
export type { NatsDeviceBus, NatsDeviceBusOptions } from './nats-device-bus.ts';
