/**
 * The writing half (GroupStreamStoreWriter) of the group stream store an owned shard's
 * GroupStreamWriter writes through: like FencedTimelineWriter, every append checks the lease
 * synchronously right before it is handed to the store. Reads and read cursors go straight to
 * the store (groupStreamOf): a cursor belongs to its reader (written by whoever serves that
 * user, compare-and-raise in the store), not to the single writer of the stream.
 */
import type { GroupStreamAppend, GroupStreamStoreWriter, StoredOutcome } from '@seqline/core';
import { ShardLeaseLostError } from './errors.ts';
import { answeredUnderLease, leaseGuard } from './fenced-timeline.ts';

export class FencedGroupStreamStoreWriter implements GroupStreamStoreWriter {
  constructor(
    private readonly inner: GroupStreamStoreWriter,
    private readonly shard: number,
    /** Why writing is not allowed now, or undefined when it is. */
    private readonly blocker: () => string | undefined,
    /** The lease's epoch: names the writer's term for the store (see WriteGuard). */
    private readonly epoch?: number,
  ) {}

  /**
   * The input goes on whole, with the lease checked again before each of the store's write round
   * trips and on its answer (a write that outlived the lease is refused, as FencedTimelineWriter's).
   */
  append(input: GroupStreamAppend): Promise<StoredOutcome[]> {
    const reason = this.blocker();
    if (reason !== undefined) return Promise.reject(new ShardLeaseLostError(this.shard, reason));
    const written = this.inner.append({ ...input, guard: leaseGuard(this.shard, this.epoch, this.blocker, input.guard) });
    return answeredUnderLease(written, this.shard, this.blocker);
  }
}
