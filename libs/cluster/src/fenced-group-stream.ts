/**
 * The GroupStreamStore an owned shard's GroupStreamWriter writes through: like
 * FencedTimelineStore, every append checks the lease synchronously right before it is handed
 * to the store. Reads pass through, and so do read cursors: a cursor belongs to its reader
 * (written by whoever serves that user, compare-and-raise in the store), not to the single
 * writer of the stream.
 */
import type { AppendOutcome, DedupKey, Entry, GroupKey, GroupStreamStore, InboxKey, WriteGuard } from '@seqline/core';
import { ShardLeaseLostError } from './errors.ts';
import { leaseGuard } from './lease-guard.ts';

export class FencedGroupStreamStore implements GroupStreamStore {
  constructor(
    private readonly inner: GroupStreamStore,
    private readonly shard: number,
    /** Why writing is not allowed now, or undefined when it is. */
    private readonly blocker: () => string | undefined,
    /** The lease's epoch: names the writer's term for the store (see WriteGuard). */
    private readonly epoch?: number,
  ) {}

  append(group: GroupKey, entries: Entry[], guard?: WriteGuard): Promise<AppendOutcome[]> {
    const reason = this.blocker();
    if (reason !== undefined) return Promise.reject(new ShardLeaseLostError(this.shard, reason));
    // The lease is checked again before each of the store's write round trips.
    return this.inner.append(group, entries, leaseGuard(this.shard, this.epoch, this.blocker, guard));
  }

  findSeqs(input: { group: GroupKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.inner.findSeqs(input);
  }

  readAfter(group: GroupKey, afterGseq: number, limit: number): Promise<Entry[]> {
    return this.inner.readAfter(group, afterGseq, limit);
  }

  readBefore(group: GroupKey, beforeGseq: number, limit: number): Promise<Entry[]> {
    return this.inner.readBefore(group, beforeGseq, limit);
  }

  headSeq(group: GroupKey): Promise<number> {
    return this.inner.headSeq(group);
  }

  setCursor(group: GroupKey, inbox: InboxKey, gseq: number): Promise<number> {
    return this.inner.setCursor(group, inbox, gseq);
  }

  getCursor(group: GroupKey, inbox: InboxKey): Promise<number> {
    return this.inner.getCursor(group, inbox);
  }

  listCursors(group: GroupKey): Promise<Map<InboxKey, number>> {
    return this.inner.listCursors(group);
  }
}
