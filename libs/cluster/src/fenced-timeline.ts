/**
 * The writing half (TimelineWriter) of the timeline an owned shard's InboxOwner writes through;
 * its reads go straight to the store (timelineOf). Every write checks the lease synchronously
 * right before it is handed to the store, so the window between the last fence check and the
 * write leaving the process is as short as it can be without store support (see README
 * "Residual risk"). The same lease check, as a WriteGuard (leaseGuard), fences the group
 * streams and the index rebuilds of the shard too.
 */
import type { EntryReaders, StoredOutcome, TimelineAppend, TimelineWriter, WriteGuard } from '@seqline/core';
import { ShardLeaseLostError } from './errors.ts';

export class FencedTimelineWriter implements TimelineWriter {
  constructor(
    private readonly inner: TimelineWriter,
    private readonly shard: number,
    /** Why writing is not allowed now, or undefined when it is. */
    private readonly blocker: () => string | undefined,
    /** The lease's epoch: names the writer's term for the store (see WriteGuard). */
    private readonly epoch?: number,
  ) {}

  /**
   * The input goes on whole (listeners and any field this fence does not know), with a guard
   * that runs the lease check again before each of the store's write round trips.
   */
  append(input: TimelineAppend): Promise<StoredOutcome[]> {
    const refused = this.refusal();
    return refused
      ? Promise.reject(refused)
      : this.inner.append({ ...input, guard: leaseGuard(this.shard, this.epoch, this.blocker, input.guard) });
  }

  addReaders(input: EntryReaders): Promise<string[]> {
    const refused = this.refusal();
    return refused ? Promise.reject(refused) : this.inner.addReaders(input);
  }

  private refusal(): ShardLeaseLostError | undefined {
    const reason = this.blocker();
    return reason === undefined ? undefined : new ShardLeaseLostError(this.shard, reason);
  }
}

/**
 * The WriteGuard a fenced store hands to the store it wraps: the caller's guard, then the lease
 * check, synchronously, before each write round trip. Its term names the lease (shard and
 * epoch), so a store that remembers a stream's head between appends forgets it when the lease
 * changes hands — even when it comes back to this process under a new epoch.
 */
export function leaseGuard(shard: number, epoch: number | undefined, blocker: () => string | undefined, outer?: WriteGuard): WriteGuard {
  const check = () => {
    outer?.();
    const lost = blocker();
    if (lost !== undefined) throw new ShardLeaseLostError(shard, lost);
  };
  const mine = epoch === undefined ? undefined : `shard-${shard}@${epoch}`;
  const term = [outer?.term, mine].filter((part) => part !== undefined).join('/');
  return term === '' ? check : Object.assign(check, { term });
}
