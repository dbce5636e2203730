export * from './api.ts';
export type { MessagingDeps } from './deps.ts';
export { createMessaging } from './messaging.ts';
export { startWorkers, runFanout, FANOUT_QUEUE, RECEIPT_QUEUE, type FanoutJob, type ReceiptJob, type WorkerOptions } from './jobs.ts';
