/**
 * Persisted jobs of the local bus on LMDB: pending jobs with two order indexes (all, and per
 * queue) so listing oldest-first is a range scan, and a dead-letter set with its own order.
 */
import type { Database } from 'lmdb';
import { BadRequestError, MAX_JOB_ID_BYTES, type JobRevival, type JobStore, type StoredJob } from '@seqline/core';
import { fromJsonRow, toJsonRow, type JsonRow } from './json-rows.ts';
import { MAX_KEY_NUMBER, MAX_KEY_STRING } from './keys.ts';
import { fitsInKey } from './seq-log.ts';
import type { WriteBatcher } from './write-batcher.ts';

type OrderKey = [createdAt: number, id: string];
type QueueOrderKey = [queue: string, createdAt: number, id: string];

export interface JobDbs {
  /** Jobs as JSON text (json-rows.ts: payloads carry entries); older rows are msgpack objects. */
  pending: Database<JsonRow<StoredJob>, string>;
  order: Database<true, OrderKey>;
  queueOrder: Database<true, QueueOrderKey>;
  dead: Database<JsonRow<StoredJob>, string>;
  deadOrder: Database<true, OrderKey>;
}

export class LmdbJobStore implements JobStore {
  constructor(
    private readonly dbs: JobDbs,
    private readonly writes: WriteBatcher,
  ) {}

  async put(job: StoredJob): Promise<boolean> {
    checkJob(job);
    return this.writes.run(() => {
      if (this.dbs.pending.doesExist(job.id)) return false;
      this.putPending(job);
      return true;
    });
  }

  /** Replaces a pending job; a no-op when it is no longer pending (never resurrects one). */
  async update(job: StoredJob): Promise<void> {
    checkJob(job);
    await this.writes.run(() => {
      if (!this.removePending(job.id)) return;
      this.putPending(job);
    });
  }

  async remove(id: string): Promise<void> {
    await this.writes.run(() => {
      this.removePending(id);
    });
  }

  async list({ queue }: { queue?: string }): Promise<StoredJob[]> {
    const ids =
      queue === undefined
        ? Array.from(this.dbs.order.getKeys({ start: [-MAX_KEY_NUMBER], end: [MAX_KEY_NUMBER, MAX_KEY_STRING] }), ([, id]) => id)
        : Array.from(this.dbs.queueOrder.getKeys({ start: [queue], end: [queue, MAX_KEY_NUMBER, MAX_KEY_STRING] }), ([, , id]) => id);
    return present(ids.map((id) => fromJsonRow(this.dbs.pending.get(id))));
  }

  async bury(job: StoredJob): Promise<void> {
    checkJob(job);
    await this.writes.run(() => {
      this.removePending(job.id);
      this.removeDead(job.id);
      this.dbs.dead.put(job.id, toJsonRow(job));
      this.dbs.deadOrder.put([job.createdAt, job.id], true);
    });
  }

  async listDead(): Promise<StoredJob[]> {
    const ids = Array.from(this.dbs.deadOrder.getKeys({ start: [-MAX_KEY_NUMBER], end: [MAX_KEY_NUMBER, MAX_KEY_STRING] }), ([, id]) => id);
    return present(ids.map((id) => fromJsonRow(this.dbs.dead.get(id))));
  }

  /** If a job with the same id was put again meanwhile, that pending job wins. */
  async revive({ id, now }: JobRevival): Promise<boolean> {
    return this.writes.run(() => {
      const dead = this.removeDead(id);
      if (dead === undefined) return false;
      // A fresh give-up window: no failure yet.
      const { firstFailedAt: _closed, ...job } = dead;
      if (!this.dbs.pending.doesExist(id)) this.putPending({ ...job, attempts: 0, notBefore: now });
      return true;
    });
  }

  /** Inside a write transaction. */
  private putPending(job: StoredJob): void {
    this.dbs.pending.put(job.id, toJsonRow(job));
    this.dbs.order.put([job.createdAt, job.id], true);
    this.dbs.queueOrder.put([job.queue, job.createdAt, job.id], true);
  }

  /** Inside a write transaction; returns whether the job was pending. */
  private removePending(id: string): boolean {
    const old = fromJsonRow(this.dbs.pending.get(id));
    if (old === undefined) return false;
    this.dbs.pending.remove(id);
    this.dbs.order.remove([old.createdAt, old.id]);
    this.dbs.queueOrder.remove([old.queue, old.createdAt, old.id]);
    return true;
  }

  /** Inside a write transaction; returns the dead job that was removed, if any. */
  private removeDead(id: string): StoredJob | undefined {
    const old = fromJsonRow(this.dbs.dead.get(id));
    if (old === undefined) return undefined;
    this.dbs.dead.remove(id);
    this.dbs.deadOrder.remove([old.createdAt, old.id]);
    return old;
  }
}

function checkJob(job: StoredJob): void {
  // A job id may be longer than other key parts (server-ids.ts): keys hold about 2 KB.
  if (job.id.length === 0 || Buffer.byteLength(job.id, 'utf8') > MAX_JOB_ID_BYTES || !fitsInKey(job.queue)) {
    throw new BadRequestError('job id or queue is empty or too long');
  }
  if (!Number.isSafeInteger(job.createdAt)) throw new BadRequestError(`job ${job.id}: createdAt must be an integer`);
  if (job.firstFailedAt !== undefined && !Number.isSafeInteger(job.firstFailedAt)) {
    throw new BadRequestError(`job ${job.id}: firstFailedAt must be an integer`);
  }
}

function present(jobs: Array<StoredJob | undefined>): StoredJob[] {
  return jobs.filter((job): job is StoredJob => job !== undefined);
}
