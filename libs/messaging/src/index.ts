export * from './api.ts';
export type { MessagingDeps, MessagingEnv, MessagingPolicy, MessagingStores, MessagingWriters, GroupStreamAppender } from './deps.ts';
export { createMessaging } from './messaging.ts';
export { startWorkers, type WorkerDeps, type Workers, type WorkerStats, type WorkerTuning, type PoolName } from './workers.ts';
export type { BatchStats } from './batch-scheduler.ts';
export { FANOUT_QUEUES, NOTIFY_QUEUE, RECEIPT_QUEUE, fanoutQueueFor, type FanoutJob, type NotifyJob, type ReceiptJob } from './queues.ts';
export { AFTER_SEND_QUEUE, type AfterSendJob } from './queues.ts';
export { OFFLINE_NOTIFY_QUEUE, type OfflineNotifyJob } from './queues.ts';
export { groupKeyOfPayload, senderKeyOfPayload } from './queues.ts';
export { OfflineNotifier, type OfflineNotifierDeps, type OfflineNotifierStats } from './offline-notifier.ts';
export { DEFAULT_NOTIFY_RETRY_BACKOFF } from './offline-notify-sender.ts';
export { OFFLINE_NOTIFY_TIMEOUT_MS } from './offline-notify-job.ts';
export {
  BADGE_MAX_PAGES,
  BADGE_STREAM_ROWS,
  BadgeIndexBehindError,
  unreadBadge,
  type BadgeDeps,
  type UnreadBadge,
} from './unread-badge.ts';
export { buildTierEntry } from './groups.ts';
export { conversationStreamSides } from './group-conversations.ts';
export { LiveSettings, type LiveSettingsOptions, type SettingsListener, type SettingsPatch } from './live-settings.ts';
export * from './admin.ts';
export type { ConversationCheck, ConversationDifference, InboxConversationsView, RebuildView } from './admin-conversations.ts';
export { MAX_ADMIN_PAGE } from './admin-checks.ts';
export { AdminHooks, type AdminHooksDeps, type HooksView, type ShownHooks } from './admin-hooks.ts';
export { AdminJobs, type AdminJobsDeps, type PendingJob, type PendingJobsView } from './admin-jobs.ts';
