/**
 * JobStore on CQL: pending jobs in `jobs`, dead letters in `dead_jobs` (both LWT-only, so
 * "put once" and "revive once" hold across processes), ordered listings through `job_order`.
 *
 * Cassandra cannot move a row between tables atomically, so moves are ordered to never lose a
 * job: bury writes the dead letter before removing the pending job, revive writes the pending
 * job before removing the dead letter. A crash in between leaves the job in both places (it
 * may run once more), never in neither. Index rows are written before the row they list and
 * are checked against it when listing, so a crash leaves at worst an ignored index row.
 */
import {
  KeyedQueue,
  BadRequestError,
  InternalError,
  MAX_JOB_ID_BYTES,
  type JobRevival,
  type JobStore,
  type StoredJob,
} from '@seqline/core';
import type { Cql } from './cql.ts';
import { contentionPause } from './ceilings.ts';
import { JobTable } from './job-table.ts';

const PENDING = 'pending';
const DEAD = 'dead';
const MAX_ATTEMPTS = 30;

function pendingScopes(job: StoredJob): string[] {
  return [PENDING, `queue:${job.queue}`];
}

/** Pending scopes whose index row for `a` is not also the index row for `b` (safe to drop). */
function scopesOnlyIn(a: StoredJob, b: StoredJob): string[] {
  const kept = new Set(pendingScopes(b).map((scope) => `${scope}\u0000${b.createdAt}`));
  return pendingScopes(a).filter((scope) => !kept.has(`${scope}\u0000${a.createdAt}`));
}

export class CqlJobStore implements JobStore {
  private readonly pending: JobTable;
  private readonly dead: JobTable;
  private readonly serial = new KeyedQueue();

  constructor(cql: Cql) {
    this.pending = new JobTable(cql, 'jobs');
    this.dead = new JobTable(cql, 'dead_jobs');
  }

  put(job: StoredJob): Promise<boolean> {
    checkJob(job);
    return this.serial.run(job.id, () => this.putPending(job));
  }

  update(job: StoredJob): Promise<void> {
    checkJob(job);
    return this.serial.run(job.id, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await this.pending.read(job.id);
        if (current === undefined) return; // never resurrects a job
        await this.pending.index(scopesOnlyIn(job, current.job), job);
        if ((await this.pending.replace(job, current.op)) === 'applied') {
          await this.pending.unindex(scopesOnlyIn(current.job, job), current.job);
          return;
        }
        await contentionPause(attempt);
      }
      throw new InternalError(`update job ${job.id}: gave up after ${MAX_ATTEMPTS} contended attempts`);
    });
  }

  remove(id: string): Promise<void> {
    return this.serial.run(id, () => this.removePending(id));
  }

  list({ queue }: { queue?: string }): Promise<StoredJob[]> {
    return queue === undefined ? this.pending.list(PENDING) : this.pending.list(`queue:${queue}`, queue);
  }

  bury(job: StoredJob): Promise<void> {
    checkJob(job);
    return this.serial.run(job.id, async () => {
      await this.dead.index([DEAD], job);
      for (let attempt = 0; ; attempt++) {
        if (attempt >= MAX_ATTEMPTS) throw new InternalError(`bury job ${job.id}: gave up after ${MAX_ATTEMPTS} contended attempts`);
        const current = await this.dead.read(job.id);
        if (current === undefined) {
          if ((await this.dead.insert(job)).outcome === 'applied') break;
        } else if ((await this.dead.replace(job, current.op)) === 'applied') {
          if (current.job.createdAt !== job.createdAt) await this.dead.unindex([DEAD], current.job);
          break;
        }
        await contentionPause(attempt);
      }
      await this.removePending(job.id);
    });
  }

  listDead(): Promise<StoredJob[]> {
    return this.dead.list(DEAD);
  }

  /** If a job with the same id was put again meanwhile, that pending job wins. */
  revive({ id, now }: JobRevival): Promise<boolean> {
    return this.serial.run(id, async () => {
      const dead = await this.dead.read(id);
      if (dead === undefined) return false;
      // A fresh give-up window: no failure yet.
      const { firstFailedAt: _closed, ...job } = dead.job;
      await this.putPending({ ...job, attempts: 0, notBefore: now });
      if ((await this.dead.delete(id, dead.op)) === 'refused') return false; // revived or re-buried concurrently
      await this.dead.unindex([DEAD], dead.job);
      return true;
    });
  }

  /** Unserialized: callers hold the id's turn. */
  private async putPending(job: StoredJob): Promise<boolean> {
    await this.pending.index(pendingScopes(job), job);
    const { outcome, existing } = await this.pending.insert(job);
    if (outcome === 'applied') return true;
    // Our index rows name a version that was never stored, unless they coincide with the existing job's.
    if (existing !== undefined) await this.pending.unindex(scopesOnlyIn(job, existing.job), job);
    return false;
  }

  /** Unserialized: callers hold the id's turn. */
  private async removePending(id: string): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.pending.read(id);
      if (current === undefined) return;
      if ((await this.pending.delete(id, current.op)) === 'applied') {
        await this.pending.unindex(pendingScopes(current.job), current.job);
        return;
      }
      await contentionPause(attempt);
    }
    throw new InternalError(`remove job ${id}: gave up after ${MAX_ATTEMPTS} contended attempts`);
  }
}

function checkJob(job: StoredJob): void {
  if (job.id.length === 0 || Buffer.byteLength(job.id) > MAX_JOB_ID_BYTES || Buffer.byteLength(job.queue) > 512) {
    throw new BadRequestError('job id or queue is empty or too long');
  }
  if (!Number.isSafeInteger(job.createdAt)) throw new BadRequestError(`job ${job.id}: createdAt must be an integer`);
  if (!Number.isSafeInteger(job.notBefore) || !Number.isSafeInteger(job.attempts)) {
    throw new BadRequestError(`job ${job.id}: notBefore and attempts must be integers`);
  }
  if (job.firstFailedAt !== undefined && !Number.isSafeInteger(job.firstFailedAt)) {
    throw new BadRequestError(`job ${job.id}: firstFailedAt must be an integer`);
  }
}
