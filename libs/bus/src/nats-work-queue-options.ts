/** What createNatsWorkQueue (nats-work-queue.ts, which re-exports these) takes and returns. */
import type { Clock, Logger, WorkQueue } from '@seqline/core';
import type { NatsConnection } from '@nats-io/transport-node';
import type { QueueStats } from './queue-common.ts';

/** Retry delays of the NATS work queue: 5 s, 10 s, 30 s, 1 min, 2 min, then 5 min. */
export const DEFAULT_NATS_BACKOFF_MS: readonly number[] = [5_000, 10_000, 30_000, 60_000, 120_000, 300_000];

export interface NatsWorkQueueOptions {
  /** The caller's connection; close() leaves it open. */
  nc: NatsConnection;
  logger: Logger;
  clock?: Clock;
  /** Streams `<prefix>_JOBS`, `<prefix>_DLQ` and `<prefix>_JOB_FAILURES`. Default `SEQLINE`. */
  streamPrefix?: string;
  /** Prepended to the `jobs.<queue>` / `dlq.<queue>` / `failures.<queue>.<seq>` subjects (e.g. `test1.`). Default none. */
  subjectPrefix?: string;
  /**
   * Retry delays: after failed attempt n the delivery is nak'd with backoffMs[n-1] (the last
   * value repeats). Default 5 s, 10 s, 30 s, 1 min, 2 min, 5 min.
   */
  backoffMs?: number[];
  /**
   * How long a delivery may go without an ack or a `working()` before the server hands it to
   * another consumer: the crash-detection delay. Live deliveries are kept alive every ackWait/3.
   * Default 30 s.
   */
  ackWaitMs?: number;
  /**
   * A job still failing this long after its first failed attempt is dead-lettered (the local
   * queue's rule). JetStream keeps only a delivery count per job, so the window becomes a count:
   * `attemptsSpanning(giveUpAfterMs, backoffMs)` attempts, the fewest whose retry delays since
   * the first failure add up to more than the window. Waiting in the stream for a consumer is
   * never counted. Default 30 min (12 attempts with the default backoff: the last ≥ 33¾ min
   * after the first failure).
   */
  giveUpAfterMs?: number;
  /**
   * Failed attempts before dead-lettering, overriding the count derived from `giveUpAfterMs`.
   * Only a handler's failure counts (recorded per job: nats-job-failures.ts), not a delivery
   * that ended without an outcome.
   */
  maxDeliver?: number;
  /**
   * Deliveries of one job that may end without an outcome — its worker killed or stopped
   * mid-job, its ack wait run out — before it is dead-lettered unrun (a job that kills every
   * worker). They never count toward `maxDeliver`. Default 50.
   */
  maxCrashedDeliveries?: number;
  /**
   * `Nats-Msg-Id` dedup window (default 2 min). An id enqueued again after the window while
   * still pending runs twice: handlers are idempotent by appinfo (I3), so that is harmless.
   */
  duplicateWindowMs?: number;
  /** Server-side bound of unacked deliveries per queue, all processes together. Default 10 000. */
  maxAckPending?: number;
  /**
   * Deliveries held beyond `concurrency`, waiting for their key's bound (kept alive with
   * `working()`). JetStream delivers in stream order, so a burst of one key longer than this
   * delays other keys queued behind it until it drains below the bound (head-of-line blocking);
   * within the window, other keys overtake the saturated one. Default max(4×concurrency, 256).
   */
  prefetch?: number;
}

export interface NatsWorkQueue extends WorkQueue {
  stats(): Record<string, QueueStats>;
}
