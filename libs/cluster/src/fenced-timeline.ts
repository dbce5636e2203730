/**
 * The TimelineStore an owned shard's InboxOwner writes through. Every write checks the lease
 * synchronously right before it is handed to the store, so the window between the last fence
 * check and the write leaving the process is as short as it can be without store support (see
 * README "Residual risk"). Reads pass through.
 */
import type { AppendListeners, AppendOutcome, DedupKey, Entry, InboxKey, TimelineStore, WriteGuard } from '@seqline/core';
import { ShardLeaseLostError } from './errors.ts';
import { leaseGuard } from './lease-guard.ts';

export class FencedTimelineStore implements TimelineStore {
  constructor(
    private readonly inner: TimelineStore,
    private readonly shard: number,
    /** Why writing is not allowed now, or undefined when it is. */
    private readonly blocker: () => string | undefined,
    /** The lease's epoch: names the writer's term for the store (see WriteGuard). */
    private readonly epoch?: number,
  ) {}

  /** `listeners` pass through whole: the store tells them (AppendListeners). */
  append(inbox: InboxKey, entries: Entry[], guard?: WriteGuard, listeners?: AppendListeners): Promise<AppendOutcome[]> {
    const refused = this.refusal();
    return refused ? Promise.reject(refused) : this.inner.append(inbox, entries, this.guarded(guard), listeners);
  }

  /** The lease check again before each of the store's write round trips (not only the first). */
  private guarded(outer?: WriteGuard): WriteGuard {
    return leaseGuard(this.shard, this.epoch, this.blocker, outer);
  }

  addReaders(inbox: InboxKey, seq: number, readers: string[]): Promise<string[]> {
    const refused = this.refusal();
    return refused ? Promise.reject(refused) : this.inner.addReaders(inbox, seq, readers);
  }

  findSeqs(input: { inbox: InboxKey; keys: readonly DedupKey[] }): Promise<Map<DedupKey, number>> {
    return this.inner.findSeqs(input);
  }

  getEntry(inbox: InboxKey, seq: number): Promise<Entry | null> {
    return this.inner.getEntry(inbox, seq);
  }

  readAfter(inbox: InboxKey, afterSeq: number, limit: number): Promise<Entry[]> {
    return this.inner.readAfter(inbox, afterSeq, limit);
  }

  readBefore(inbox: InboxKey, beforeSeq: number, limit: number): Promise<Entry[]> {
    return this.inner.readBefore(inbox, beforeSeq, limit);
  }

  headSeq(inbox: InboxKey): Promise<number> {
    return this.inner.headSeq(inbox);
  }

  getReaders(inbox: InboxKey, seq: number): Promise<string[]> {
    return this.inner.getReaders(inbox, seq);
  }

  private refusal(): ShardLeaseLostError | undefined {
    const reason = this.blocker();
    return reason === undefined ? undefined : new ShardLeaseLostError(this.shard, reason);
  }
}
