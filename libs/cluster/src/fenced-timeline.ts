/**
 * The writing half (TimelineWriter) of the timeline an owned shard's InboxOwner writes through;
 * its reads go straight to the store (timelineOf). Every write checks the lease synchronously
 * right before it is handed to the store, so the window between the last fence check and the
 * write leaving the process is as short as it can be without store support (see README
 * "Residual risk"). The same lease check, as a WriteGuard (leaseGuard), fences the group
 * streams and the index rebuilds of the shard too.
 *
 * The lease is checked again when the store answers (and before `durable` is told): an owner
 * paused while its write was in flight has been succeeded, and its successor range-deletes such a
 * late write, so it must be reported failed — never acknowledged or pushed (docs/faults.md, "A
 * deposed owner pushed a write its successor then range-deleted").
 */
import type { DurableListener, EntryReaders, StoredOutcome, TimelineAppend, TimelineWriter, WriteGuard } from '@seqline/core';
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
    if (refused) return Promise.reject(refused);
    const durable = input.durable && this.whileHeld(input.durable);
    const written = this.inner.append({
      ...input,
      guard: leaseGuard(this.shard, this.epoch, this.blocker, input.guard),
      ...(durable && { durable }),
    });
    return answeredUnderLease(written, this.shard, this.blocker);
  }

  addReaders(input: EntryReaders): Promise<string[]> {
    const refused = this.refusal();
    return refused ? Promise.reject(refused) : this.inner.addReaders(input);
  }

  /** `durable` told only while the lease holds: a deposed owner's write is answered by the append's refusal. */
  private whileHeld(durable: DurableListener): DurableListener {
    return (outcomes) => {
      if (this.blocker() === undefined) durable(outcomes);
    };
  }

  private refusal(): ShardLeaseLostError | undefined {
    const reason = this.blocker();
    return reason === undefined ? undefined : new ShardLeaseLostError(this.shard, reason);
  }
}

/**
 * A write's answer, refused when the lease lapsed while the write was in flight: the successor
 * waits the lease out and range-deletes a write that lands after it took over.
 */
export async function answeredUnderLease<T>(written: Promise<T>, shard: number, blocker: () => string | undefined): Promise<T> {
  const answer = await written;
  const lost = blocker();
  if (lost !== undefined) throw new ShardLeaseLostError(shard, `${lost} (while the write was in flight)`);
  return answer;
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
