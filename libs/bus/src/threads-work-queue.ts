/**
 * The work queue of a process running several threads over one LMDB environment
 * (docs/decisions.md, "Threads embedded: the bus over message ports"). Jobs live in the one
 * JobStore, durable before `enqueue` resolves, as with one thread; each job runs on one thread,
 * the owner of its place key's shard (its id unless `placeKeyOf` says otherwise). A thread that
 * stores a job for another tells it with a one-way notice: nothing waits for an answer, because
 * a notice that never arrives (its thread gone) loses nothing — the job is pending in the store,
 * and that thread's next start resumes it with the rest of its share.
 */
import { shardOf, DEFAULT_SHARD_COUNT } from '@seqline/core';
import type { StoredJob } from '@seqline/core';
import { createLocalWorkQueue, type LocalWorkQueue, type LocalWorkQueueOptions } from './local-work-queue.ts';
import type { ThreadHub } from './threads-hub.ts';
import { threadOfShard } from './threads-mesh.ts';

export interface ThreadWorkQueueOptions extends Omit<LocalWorkQueueOptions, 'placement'> {
  hub: ThreadHub;
  /** Threads running jobs, numbered 0..threads-1 on the hub; a thread numbered past them only stores. */
  threads: number;
  /** What places a job (the same on every thread); default its id. A queue's group key keeps a group's jobs on one thread. */
  placeKeyOf?: (job: StoredJob) => string | undefined;
  /** Default 64. */
  shardCount?: number;
  /** Channel name on the hub. Default `jobs`. */
  channel?: string;
}

export interface ThreadWorkQueue extends LocalWorkQueue {
  /** The thread that runs `job`. */
  threadOf(job: StoredJob): number;
}

type JobNotice = { op: 'stored'; job: StoredJob };

export function createThreadWorkQueue(options: ThreadWorkQueueOptions): ThreadWorkQueue {
  const { hub, threads } = options;
  const shardCount = options.shardCount ?? DEFAULT_SHARD_COUNT;
  const logger = options.logger.child({ component: 'thread-work-queue' });
  const threadOf = (job: StoredJob): number => {
    let key: string | undefined;
    try {
      key = options.placeKeyOf?.(job);
    } catch (err) {
      logger.warn({ err, id: job.id }, 'placeKeyOf threw; placing the job by its id');
    }
    return threadOfShard(shardOf(key ?? job.id, shardCount), threads);
  };
  // Its handlers start once this function returned (ThreadHub.open): `queue` exists by then.
  const channel = hub.open(options.channel ?? 'jobs', {
    onMessage: (body, from) => {
      if (isNotice(body)) queue.take(body.job);
      else logger.warn({ from }, 'malformed job notice dropped');
    },
  });
  const queue: LocalWorkQueue = createLocalWorkQueue({
    ...options,
    placement: {
      here: (job) => threadOf(job) === hub.self,
      elsewhere: (job) => {
        const thread = threadOf(job);
        // Not reachable (gone, or not started yet): the job waits in the store for that thread's start.
        if (!channel.send(thread, { op: 'stored', job } satisfies JobNotice))
          logger.info({ id: job.id, queue: job.queue, thread }, 'job stored for a thread not reachable now; it resumes it when it starts');
      },
    },
  });

  return {
    ...queue,
    threadOf,
    async close(): Promise<void> {
      await queue.close();
      await channel.close();
    },
  };
}

function isNotice(body: unknown): body is JobNotice {
  if (typeof body !== 'object' || body === null || (body as JobNotice).op !== 'stored') return false;
  const job = (body as JobNotice).job as Partial<StoredJob> | null;
  return (
    typeof job === 'object' &&
    job !== null &&
    typeof job.id === 'string' &&
    typeof job.queue === 'string' &&
    Number.isFinite(job.attempts) &&
    Number.isFinite(job.notBefore) &&
    Number.isFinite(job.createdAt)
  );
}
