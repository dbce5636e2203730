/**
 * One LWT-only job table (`jobs` or `dead_jobs`, `((id)) → job columns + op`) and the shared
 * plain-write order index `job_order ((scope), created_at, id)` that makes listing oldest-first
 * a partition read. Every row carries `op`, the id of the write that last changed it: it is the
 * compare-and-set token and tells, after a timeout, whether our write is the one that landed.
 */
import type { Json, StoredJob } from '@seqline/core';
import type { types } from 'cassandra-driver';
import { isUnknownOutcome, mapLimit, newOp, num, optNum, optStr, sameOp, str, type Cql, type Row } from './cql.ts';

export interface StoredRow {
  job: StoredJob;
  op: types.Uuid;
}

/** Outcome of one compare-and-set (a timeout is resolved by a serial re-read, never returned). */
export type CasOutcome = 'applied' | 'refused';

/** `first_failed_at`: schema/007_job_first_failure.cql; null in rows written before it (no failure yet). */
const COLUMNS = 'id, queue, payload, attempts, not_before, created_at, last_error, first_failed_at, op';

export class JobTable {
  private readonly q: Record<'read' | 'insert' | 'update' | 'delete' | 'indexAdd' | 'indexDelete' | 'indexList', string>;

  constructor(
    private readonly cql: Cql,
    table: string,
  ) {
    const jobs = cql.table(table);
    const order = cql.table('job_order');
    this.q = {
      read: `SELECT ${COLUMNS} FROM ${jobs} WHERE id = ?`,
      insert: `INSERT INTO ${jobs} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
      update: `UPDATE ${jobs} SET queue = ?, payload = ?, attempts = ?, not_before = ?, created_at = ?, last_error = ?, first_failed_at = ?, op = ? WHERE id = ? IF op = ?`,
      delete: `DELETE FROM ${jobs} WHERE id = ? IF op = ?`,
      indexAdd: `INSERT INTO ${order} (scope, created_at, id) VALUES (?, ?, ?)`,
      indexDelete: `DELETE FROM ${order} WHERE scope = ? AND created_at = ? AND id = ?`,
      indexList: `SELECT created_at, id FROM ${order} WHERE scope = ?`,
    };
  }

  /** Linearizable read of one job. */
  async read(id: string, serial = true): Promise<StoredRow | undefined> {
    const result = serial ? await this.cql.serialRead(this.q.read, [id]) : await this.cql.read(this.q.read, [id]);
    const row = result.first();
    return row === null ? undefined : rowToJob(row);
  }

  /** INSERT … IF NOT EXISTS; on refusal returns the row that was there. */
  async insert(job: StoredJob): Promise<{ outcome: CasOutcome; existing?: StoredRow }> {
    const op = newOp();
    try {
      const result = await this.cql.lwt(this.q.insert, [job.id, ...jobColumns(job, false), op]);
      if (result.wasApplied()) return { outcome: 'applied' };
      const row = result.first();
      return row === null ? { outcome: 'refused' } : { outcome: 'refused', existing: rowToJob(row) };
    } catch (err) {
      if (!isUnknownOutcome(err)) throw err;
      const now = await this.read(job.id);
      if (now !== undefined && sameOp(now.op, op)) return { outcome: 'applied' };
      return now === undefined ? { outcome: 'refused' } : { outcome: 'refused', existing: now };
    }
  }

  /** Replaces the row iff it is still the version `expected` (absent lastError or firstFailedAt clears it). */
  async replace(job: StoredJob, expected: types.Uuid): Promise<CasOutcome> {
    const op = newOp();
    return this.settle(job.id, op, () => this.cql.lwt(this.q.update, [...jobColumns(job, true), op, job.id, expected]));
  }

  /** Deletes the row iff it is still the version `expected`. */
  async delete(id: string, expected: types.Uuid): Promise<CasOutcome> {
    try {
      return (await this.cql.lwt(this.q.delete, [id, expected])).wasApplied() ? 'applied' : 'refused';
    } catch (err) {
      if (!isUnknownOutcome(err)) throw err;
      // Gone is what the caller wanted; still there means re-read and decide again.
      return (await this.read(id)) === undefined ? 'applied' : 'refused';
    }
  }

  async index(scopes: string[], job: StoredJob): Promise<void> {
    await Promise.all(scopes.map((scope) => this.cql.write(this.q.indexAdd, [scope, job.createdAt, job.id])));
  }

  async unindex(scopes: string[], job: StoredJob): Promise<void> {
    await Promise.all(scopes.map((scope) => this.cql.write(this.q.indexDelete, [scope, job.createdAt, job.id])));
  }

  /**
   * Jobs listed under `scope`, oldest first. An index row is trusted only if the job it names
   * still has that createdAt (and queue, for a queue scope): rows left by a crash or a lost race
   * are skipped, never shown.
   */
  async list(scope: string, queue?: string): Promise<StoredJob[]> {
    const rows = await this.cql.readAll(this.q.indexList, [scope]);
    const refs = rows.map((row) => ({ createdAt: num(row.get('created_at')), id: str(row.get('id'), 'id') }));
    const jobs = await mapLimit(refs, 64, async (ref) => {
      const stored = await this.read(ref.id, false);
      if (stored === undefined || stored.job.createdAt !== ref.createdAt) return undefined;
      return queue === undefined || stored.job.queue === queue ? stored.job : undefined;
    });
    return jobs.filter((job): job is StoredJob => job !== undefined);
  }

  private async settle(id: string, op: types.Uuid, send: () => Promise<types.ResultSet>): Promise<CasOutcome> {
    try {
      return (await send()).wasApplied() ? 'applied' : 'refused';
    } catch (err) {
      if (!isUnknownOutcome(err)) throw err;
      const now = await this.read(id);
      return now !== undefined && sameOp(now.op, op) ? 'applied' : 'refused';
    }
  }
}

/** queue, payload, attempts, not_before, created_at, last_error, first_failed_at. */
function jobColumns(job: StoredJob, clearMissing: boolean): unknown[] {
  const missing = clearMissing ? null : undefined;
  return [
    job.queue,
    JSON.stringify(job.payload),
    job.attempts,
    job.notBefore,
    job.createdAt,
    job.lastError ?? missing,
    job.firstFailedAt ?? missing,
  ];
}

function rowToJob(row: Row): StoredRow {
  const job: StoredJob = {
    id: str(row.get('id'), 'id'),
    queue: str(row.get('queue'), 'queue'),
    payload: JSON.parse(str(row.get('payload'), 'payload')) as Json,
    attempts: num(row.get('attempts')),
    notBefore: num(row.get('not_before')),
    createdAt: num(row.get('created_at')),
  };
  const lastError = optStr(row.get('last_error'));
  if (lastError !== undefined) job.lastError = lastError;
  const firstFailedAt = optNum(row.get('first_failed_at'));
  if (firstFailedAt !== undefined) job.firstFailedAt = firstFailedAt;
  return { job, op: row.get('op') as types.Uuid };
}
