/**
 * The background workers: one pool per tier (WeCom ran separate small- and huge-group pools),
 * plus the huge-group push pool and the receipt pool. Every pool size and the per-group bound
 * are read from `limits()` on every scheduling decision, so `seqline-admin limits set` takes
 * effect on the running process within one poke interval.
 *
 * The queue hands jobs over early (up to `holdPerGroup` per group); they wait in the tier's
 * BatchScheduler, which merges a group's waiting jobs into one batch. The queue's own
 * per-key bound is therefore only a memory bound; the enforced per-group concurrency is the
 * scheduler's (see docs/large-groups.md).
 */
import type { Json, JobContext, WorkQueue } from '@seqline/core';
import { inboxKey } from '@seqline/core';
import { BatchScheduler, type BatchStats } from './batch-scheduler.ts';
import { runAfterSend } from './after-send.ts';
import { runOfflineNotify } from './offline-notify-job.ts';
import type { BadgeDeps } from './unread-badge.ts';
import type { MessagingEnv, MessagingHooks, MessagingPolicy, MessagingWriters } from './deps.ts';
import { runGroupNotify, type NotifyDeps } from './group-notify.ts';
import {
  AFTER_SEND_QUEUE,
  FANOUT_QUEUES,
  groupKeyOfPayload,
  NOTIFY_QUEUE,
  OFFLINE_NOTIFY_QUEUE,
  parseAfterSendJob,
  parseOfflineNotifyJob,
  parseFanoutJob,
  parseNotifyJob,
  parseReceiptJob,
  RECEIPT_QUEUE,
  senderKeyOfPayload,
  tenantOfPayload,
  type AfterSendJob,
  type FanoutJob,
  type NotifyJob,
  type OfflineNotifyJob,
  type ReceiptJob,
} from './queues.ts';
import { runMergedFanout, type FanoutCounters } from './write-fanout.ts';

export interface WorkerTuning {
  /** Inbox appends in flight within one batch. Default 64. */
  appendConcurrency?: number;
  /** Most jobs of one group merged into one batch. Default 100. */
  maxBatch?: number;
  /** Jobs of one group taken off the queue at once (waiting to be merged). Default 512. */
  holdPerGroup?: number;
  /** Jobs of one queue taken off at once. Default 4096. */
  holdTotal?: number;
  /** Members per push step of a huge-group notify. Default 1000. */
  notifyChunk?: number;
  /** How long an offline-notify call may take (OFFLINE_NOTIFY_TIMEOUT_MS by default). */
  offlineNotifyTimeoutMs?: number;
  /** How often raised limits are re-read while every slot is busy. Default 250 ms. */
  pokeMs?: number;
}

export type PoolName = 'small' | 'large' | 'huge' | 'notify' | 'receipts' | 'afterSend' | 'offlineNotify';

export interface WorkerStats {
  pools: Record<PoolName, BatchStats>;
  /** Inbox appends made by write-fanout, and the entries they carried. */
  fanout: FanoutCounters;
  /** Group pushes published. */
  groupPushes: number;
}

export interface Workers {
  stats(): WorkerStats;
  /** Starts a new window for the high-water marks (max concurrency seen). */
  resetHighWater(): void;
  /** Jobs of this group waiting in any pool (merged into its next batch). */
  waitingFor(groupKey: string): number;
  /** Stops the poke timer; the queue's close stops the jobs. */
  stop(): void;
}

/** The workers write inboxes (fanout, receipts) and push huge-group messages; no store writes of their own. */
export type WorkerDeps = NotifyDeps & {
  writers: Pick<MessagingWriters, 'inbox'>;
  queue: WorkQueue;
  policy: Pick<MessagingPolicy, 'limits'>;
  env: Pick<MessagingEnv, 'logger'>;
  /** The after-send calls (each tenant's settings, read when a job runs). */
  hooks: MessagingHooks;
} & BadgeDeps;

/** After-send calls of one tenant in flight at once. */
const AFTER_SEND_PER_TENANT = 8;

export async function startWorkers(d: WorkerDeps, tuning: WorkerTuning = {}): Promise<Workers> {
  const appendConcurrency = tuning.appendConcurrency ?? 64;
  const maxBatch = tuning.maxBatch ?? 100;
  const hold = { concurrency: tuning.holdTotal ?? 4096, perKeyConcurrency: tuning.holdPerGroup ?? 512 };
  const perGroup = () => d.policy.limits().largeGroupConcurrency;
  const counters: FanoutCounters = { appends: 0, entries: 0 };
  let groupPushes = 0;

  const fanoutPool = (pool: () => number) =>
    new BatchScheduler<FanoutJob>({ pool, perGroup, maxBatch }, (_key, jobs) =>
      runMergedFanout(d.writers.inbox, jobs, appendConcurrency, counters),
    );
  const pools = {
    small: fanoutPool(() => d.policy.limits().smallPool),
    large: fanoutPool(() => d.policy.limits().largePool),
    huge: fanoutPool(() => d.policy.limits().hugePool),
    // One batch per group at a time keeps a member's pushes in gseq order; the member fan-out
    // inside a batch is where the per-group concurrency goes.
    notify: new BatchScheduler<NotifyJob>({ pool: () => d.policy.limits().hugePool, perGroup: () => 1, maxBatch }, async (_key, jobs) => {
      groupPushes += await runGroupNotify(d, jobs, { chunkSize: tuning.notifyChunk ?? 1000 });
    }),
    receipts: new BatchScheduler<ReceiptJob>(
      { pool: () => d.policy.limits().smallPool, perGroup: () => 2, maxBatch: 64 },
      async (_key, jobs) => {
        // Same sender: the inbox owner merges these into one receipt run.
        await Promise.all(
          jobs.map((j) => d.writers.inbox.addReceipt({ inbox: inboxKey(j.tenant, j.sender), appinfo: j.appinfo, readers: j.readers })),
        );
      },
    ),
    // One call per batch (a failed call retries only itself); per tenant, so one slow app's
    // hook cannot take every slot.
    afterSend: new BatchScheduler<AfterSendJob>(
      { pool: () => d.policy.limits().smallPool, perGroup: () => AFTER_SEND_PER_TENANT, maxBatch: 1 },
      async (_key, jobs) => {
        for (const job of jobs) await runAfterSend(d, job);
      },
    ),
    // Offline notifications: like after-send, one call per batch, bounded per tenant.
    offlineNotify: new BatchScheduler<OfflineNotifyJob>(
      { pool: () => d.policy.limits().smallPool, perGroup: () => AFTER_SEND_PER_TENANT, maxBatch: 1 },
      async (_key, jobs) => {
        for (const job of jobs) await runOfflineNotify(d, job, tuning.offlineNotifyTimeoutMs);
      },
    ),
  };

  const consume = async <T>(
    queue: string,
    pool: BatchScheduler<T>,
    parse: (p: Json) => T,
    keyOf: (p: Json) => string | undefined,
  ): Promise<void> => {
    await d.queue.consume({
      queue,
      handler: async (payload: Json, ctx: JobContext) => {
        const job = parse(payload);
        if (ctx.attempt > 1) d.env.logger.info({ queue, job: ctx.id, attempt: ctx.attempt }, 'job retry');
        await pool.submit(keyOf(payload), job);
      },
      options: { ...hold, keyOf },
    });
  };
  await consume(FANOUT_QUEUES.small, pools.small, parseFanoutJob, groupKeyOfPayload);
  await consume(FANOUT_QUEUES.large, pools.large, parseFanoutJob, groupKeyOfPayload);
  await consume(FANOUT_QUEUES.huge, pools.huge, parseFanoutJob, groupKeyOfPayload);
  await consume(NOTIFY_QUEUE, pools.notify, parseNotifyJob, groupKeyOfPayload);
  await consume(RECEIPT_QUEUE, pools.receipts, parseReceiptJob, senderKeyOfPayload);
  await consume(AFTER_SEND_QUEUE, pools.afterSend, parseAfterSendJob, tenantOfPayload);
  await consume(OFFLINE_NOTIFY_QUEUE, pools.offlineNotify, parseOfflineNotifyJob, tenantOfPayload);

  const all = Object.values(pools) as Array<{ poke(): void; resetHighWater(): void; waitingFor(k: string): number }>;
  const timer = setInterval(() => {
    for (const p of all) p.poke();
  }, tuning.pokeMs ?? 250);
  timer.unref();

  return {
    stats: () => ({
      pools: {
        small: pools.small.stats(),
        large: pools.large.stats(),
        huge: pools.huge.stats(),
        notify: pools.notify.stats(),
        receipts: pools.receipts.stats(),
        afterSend: pools.afterSend.stats(),
        offlineNotify: pools.offlineNotify.stats(),
      },
      fanout: { ...counters },
      groupPushes,
    }),
    resetHighWater: () => {
      for (const p of all) p.resetHighWater();
    },
    waitingFor: (groupKey) => all.reduce((n, p) => n + p.waitingFor(groupKey), 0),
    stop: () => clearInterval(timer),
  };
}
