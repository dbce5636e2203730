import type { JobRevival, JobStore, StoredJob } from '@seqline/core';

/**
 * Test double of the JobStore port (the product adapter is the LMDB one in @seqline/store).
 * Copies jobs in and out, as a real store would, so callers cannot mutate stored state.
 */
export class MemoryJobStore implements JobStore {
  readonly pending = new Map<string, StoredJob>();
  readonly dead = new Map<string, StoredJob>();
  /** Fault injection: the next calls of these methods reject. */
  failNext: { update?: number; remove?: number } = {};

  async put(job: StoredJob): Promise<boolean> {
    if (this.pending.has(job.id)) return false;
    this.pending.set(job.id, structuredClone(job));
    return true;
  }

  async update(job: StoredJob): Promise<void> {
    if (this.consumeFailure('update')) throw new Error('injected update failure');
    this.pending.set(job.id, structuredClone(job));
  }

  async remove(id: string): Promise<void> {
    if (this.consumeFailure('remove')) throw new Error('injected remove failure');
    this.pending.delete(id);
  }

  async list({ queue }: { queue?: string }): Promise<StoredJob[]> {
    return [...this.pending.values()]
      .filter((job) => queue === undefined || job.queue === queue)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map((job) => structuredClone(job));
  }

  async bury(job: StoredJob): Promise<void> {
    this.pending.delete(job.id);
    this.dead.set(job.id, structuredClone(job));
  }

  async listDead(): Promise<StoredJob[]> {
    return [...this.dead.values()].map((job) => structuredClone(job));
  }

  async revive({ id, now }: JobRevival): Promise<boolean> {
    const job = this.dead.get(id);
    if (!job) return false;
    this.dead.delete(id);
    const { firstFailedAt: _closed, ...fresh } = job;
    this.pending.set(id, { ...fresh, attempts: 0, notBefore: now });
    return true;
  }

  private consumeFailure(method: 'update' | 'remove'): boolean {
    const left = this.failNext[method] ?? 0;
    if (left <= 0) return false;
    this.failNext[method] = left - 1;
    return true;
  }
}
