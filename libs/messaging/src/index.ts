export * from './api.ts';
export type {
  MessagingDeps, MessagingEnv, MessagingPolicy, MessagingStores, MessagingWriters, GroupStreamAppender,
} from './deps.ts';
export { createMessaging } from './messaging.ts';
export { startWorkers, type WorkerDeps, type Workers, type WorkerStats, type WorkerTuning, type PoolName } from './workers.ts';
export type { BatchStats } from './batch-scheduler.ts';
export {
  FANOUT_QUEUES, NOTIFY_QUEUE, RECEIPT_QUEUE, fanoutQueueFor,
  type FanoutJob, type NotifyJob, type ReceiptJob,
} from './queues.ts';
export { streamMarkerAppinfo } from './send.ts';
export { buildTierEntry } from './groups.ts';
export { LiveSettings, type LiveSettingsOptions, type SettingsListener, type SettingsPatch } from './live-settings.ts';
export * from './admin.ts';
