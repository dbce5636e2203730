/**
 * The pending jobs of the work queue (`GET /v1/admin/jobs`): every job accepted and not yet
 * done — waiting for a worker, running, or waiting out a retry backoff — oldest first. Read from
 * the job store where this process has one it can list (embedded: the LMDB job store). In
 * distributed mode the jobs live in JetStream, which this service does not read: `pending` is
 * null there (the stream's per-subject counts say the same thing, docs/admin.md).
 */
import type { JobStore, StoredJob } from '@seqline/core';
import { checkId, checkLimit } from './admin-checks.ts';

export interface PendingJob {
  id: string;
  queue: string;
  /** Failed attempts so far. */
  attempts: number;
  createdAt: number;
  /** Epoch ms before which it does not run (a retry's backoff); 0 or past: runs when a worker is free. */
  notBefore: number;
  lastError?: string;
  payload: StoredJob['payload'];
}

export interface PendingJobsView {
  /** The queue asked for; null: every queue. */
  queue: string | null;
  /** How many jobs are pending; null when this process cannot list them (distributed mode). */
  pending: number | null;
  /** The oldest `limit` of them. */
  jobs: PendingJob[];
}

export interface AdminJobsDeps {
  /** The pending jobs, when they sit in a store this process can list (embedded). */
  jobs?: Pick<JobStore, 'list'>;
}

export class AdminJobs {
  constructor(private readonly d: AdminJobsDeps) {}

  /** A scan of the pending jobs (an operator's look, or a test harness waiting for a queue to drain). */
  async pending(input: { queue?: string; limit: number }): Promise<PendingJobsView> {
    if (input.queue !== undefined) checkId('queue', input.queue);
    const limit = checkLimit(input.limit, 'limit');
    const queue = input.queue ?? null;
    if (this.d.jobs === undefined) return { queue, pending: null, jobs: [] };
    const all = await this.d.jobs.list(input.queue === undefined ? {} : { queue: input.queue });
    return { queue, pending: all.length, jobs: all.slice(0, limit).map(viewOf) };
  }
}

function viewOf(job: StoredJob): PendingJob {
  return {
    id: job.id,
    queue: job.queue,
    attempts: job.attempts,
    createdAt: job.createdAt,
    notBefore: job.notBefore,
    ...(job.lastError === undefined ? {} : { lastError: job.lastError }),
    payload: job.payload,
  };
}
