import { InternalError, systemClock } from '@seqline/core';
import type { Clock, JobEnqueue, JobHandler, JobStore, Logger, QueueConsume, QueueOptions, StoredJob, WorkQueue } from '@seqline/core';
import { backoffDelay, DEFAULT_BACKOFF, failuresBeforeGivingUp, type BackoffPolicy } from './backoff.ts';
import { KeyedDispatcher } from './keyed-dispatcher.ts';
import { errorMessage, keyOfPayload, statsOf, type QueueStats } from './queue-common.ts';

export interface LocalWorkQueueOptions {
  /** Where accepted jobs live until they succeed (LMDB in embedded mode): I4 across a crash. */
  jobs: JobStore;
  logger: Logger;
  clock?: Clock;
  backoff?: Partial<BackoffPolicy>;
  /** Jitter source, injectable for tests. */
  random?: () => number;
  /**
   * Where each job runs when several queues share the JobStore (the threads of one process,
   * threads-work-queue.ts): `here` says whether this queue runs it, and a job this queue
   * stored (or replayed) for another goes to `elsewhere`. Default: every job runs here.
   */
  placement?: JobPlacement;
}

export interface JobPlacement {
  here(job: StoredJob): boolean;
  elsewhere(job: StoredJob): void;
}

export interface LocalWorkQueue extends WorkQueue {
  /** Live counters per consumed queue (for tests, metrics and the admin CLI). */
  stats(): Record<string, QueueStats>;
  /** Runs a job another queue stored for this one (see `placement`), if its queue is consumed here. */
  take(job: StoredJob): void;
}

interface QueueRuntime {
  name: string;
  handler: JobHandler;
  options: QueueOptions;
  dispatcher: KeyedDispatcher<StoredJob>;
  /** Ids scheduled in this process (waiting, delayed or running): each runs once at a time. */
  scheduled: Set<string>;
  delayed: Map<string, NodeJS.Timeout>;
}

/**
 * The embedded-mode work queue: jobs are persisted in a JobStore before `enqueue` resolves and
 * removed only after their handler succeeded, so a crash at any point leaves them pending, and
 * `consume` resumes them (at-least-once: handlers must be idempotent, which I3 makes them).
 */
export function createLocalWorkQueue(options: LocalWorkQueueOptions): LocalWorkQueue {
  const { jobs } = options;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const policy: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const maxFailures = failuresBeforeGivingUp(policy);
  const logger = options.logger.child({ component: 'local-work-queue' });
  const runtimes = new Map<string, QueueRuntime>();
  /** No job starts any more (stopConsuming); enqueues still store theirs for the next start. */
  let consuming = true;
  let stopping: Promise<void> | undefined;
  /** Enqueues refused (close). */
  let closed = false;
  const enqueues = new Set<Promise<unknown>>();

  function assertOpen(): void {
    if (closed) throw new InternalError('work queue is closed');
  }

  /** A job stored (or replayed) here: scheduled if it runs here, else handed to its place. */
  function place(job: StoredJob): void {
    if (options.placement && !options.placement.here(job)) return options.placement.elsewhere(job);
    const rt = runtimes.get(job.queue);
    if (rt) schedule(rt, job);
  }

  function schedule(rt: QueueRuntime, job: StoredJob): void {
    if (!consuming || rt.scheduled.has(job.id)) return;
    rt.scheduled.add(job.id);
    const delay = job.notBefore - clock.now();
    if (delay <= 0) {
      rt.dispatcher.submit(job, keyOfPayload(rt.options, job.payload, logger));
      return;
    }
    const timer = setTimeout(() => {
      rt.delayed.delete(job.id);
      rt.dispatcher.submit(job, keyOfPayload(rt.options, job.payload, logger));
    }, delay);
    rt.delayed.set(job.id, timer);
  }

  async function run(rt: QueueRuntime, job: StoredJob): Promise<void> {
    const attempt = job.attempts + 1;
    try {
      await rt.handler(job.payload, { id: job.id, attempt });
    } catch (err) {
      await onFailure(rt, job, err);
      return;
    }
    rt.scheduled.delete(job.id);
    try {
      await jobs.remove(job.id);
    } catch (err) {
      // The job stays pending and runs again after a restart: harmless for idempotent handlers.
      logger.error({ err, queue: rt.name, id: job.id }, 'could not remove a finished job');
    }
  }

  async function onFailure(rt: QueueRuntime, job: StoredJob, err: unknown): Promise<void> {
    const now = clock.now();
    // Kept for operators (when did it start failing); the give-up rule counts attempts, so a
    // wait for a worker or a clock jump never shortens the window.
    const firstFailedAt = job.firstFailedAt ?? now;
    const failed: StoredJob = { ...job, attempts: job.attempts + 1, firstFailedAt, lastError: errorMessage(err) };
    if (failed.attempts >= maxFailures) {
      rt.scheduled.delete(job.id);
      try {
        await jobs.bury(failed);
        logger.error({ queue: rt.name, id: job.id, attempts: failed.attempts, lastError: failed.lastError }, 'job dead-lettered');
      } catch (buryErr) {
        logger.error({ err: buryErr, queue: rt.name, id: job.id }, 'could not dead-letter a job; it stays pending');
      }
      return;
    }
    failed.notBefore = now + backoffDelay(failed.attempts, policy, random);
    logger.warn(
      { queue: rt.name, id: job.id, attempt: failed.attempts, retryAt: failed.notBefore, lastError: failed.lastError },
      'job failed; will retry',
    );
    try {
      await jobs.update(failed);
    } catch (updateErr) {
      // Retry from memory anyway; only the attempt count is lost on a crash.
      logger.error({ err: updateErr, queue: rt.name, id: job.id }, 'could not persist a retry');
    }
    rt.scheduled.delete(job.id);
    schedule(rt, failed);
  }

  /** Nothing starts any more; resolves once the running handlers finished (a failed one is persisted for retry). */
  function stopConsuming(): Promise<void> {
    stopping ??= (async () => {
      consuming = false;
      const idle: Promise<void>[] = [];
      for (const rt of runtimes.values()) {
        for (const timer of rt.delayed.values()) clearTimeout(timer);
        rt.delayed.clear();
        rt.dispatcher.stop();
        idle.push(rt.dispatcher.idle());
      }
      await Promise.all(idle);
    })();
    return stopping;
  }

  return {
    async enqueue({ queue, id, payload }: JobEnqueue): Promise<void> {
      assertOpen();
      const now = clock.now();
      const job: StoredJob = { id, queue, payload, attempts: 0, notBefore: now, createdAt: now };
      const stored = jobs.put(job);
      enqueues.add(stored);
      try {
        if (await stored) place(job);
      } finally {
        enqueues.delete(stored);
      }
    },

    async consume({ queue, handler, options: queueOptions }: QueueConsume): Promise<void> {
      assertOpen();
      if (!consuming) throw new InternalError('work queue stopped consuming');
      if (runtimes.has(queue)) throw new InternalError(`queue ${queue} is already consumed by this work queue`);
      const rt: QueueRuntime = {
        name: queue,
        handler,
        options: queueOptions,
        dispatcher: new KeyedDispatcher<StoredJob>(queueOptions, (job) => run(rt, job)),
        scheduled: new Set(),
        delayed: new Map(),
      };
      // Registered before listing so a job enqueued meanwhile is scheduled (the id set dedups).
      runtimes.set(queue, rt);
      const pending = await jobs.list({ queue });
      if (pending.length > 0) logger.info({ queue, jobs: pending.length }, 'resuming pending jobs');
      for (const job of pending) if (!options.placement || options.placement.here(job)) schedule(rt, job);
    },

    async deadLetters(): Promise<StoredJob[]> {
      return jobs.listDead();
    },

    async replay(id: string): Promise<boolean> {
      assertOpen();
      const dead = (await jobs.listDead()).find((job) => job.id === id);
      if (!dead) return false;
      const now = clock.now();
      if (!(await jobs.revive({ id, now }))) return false;
      // A replayed job gets a fresh give-up window (no failure yet), whatever the store kept.
      const revived: StoredJob = { id, queue: dead.queue, payload: dead.payload, attempts: 0, notBefore: now, createdAt: now };
      await jobs.update(revived);
      logger.info({ queue: dead.queue, id }, 'dead letter replayed');
      place(revived);
      return true;
    },

    stopConsuming,

    async close(): Promise<void> {
      await stopConsuming();
      closed = true;
      // What was accepted before is stored before close resolves (each settles its own caller).
      while (enqueues.size > 0) await Promise.allSettled([...enqueues]);
    },

    take(job: StoredJob): void {
      const rt = runtimes.get(job.queue);
      if (rt) schedule(rt, job);
    },

    stats(): Record<string, QueueStats> {
      const out: Record<string, QueueStats> = {};
      for (const rt of runtimes.values()) out[rt.name] = statsOf(rt.dispatcher, rt.delayed.size);
      return out;
    },
  };
}
