/**
 * What a host's shard owners count, for its metrics: the levels its live owners hold now, and
 * totals since the process started. An owner goes with its lease, so the totals of the owners it
 * dropped are kept here; and what a dropped owner still held is counted apart: the failed appends
 * it never told of (their entries may have landed, unpushed and unnotified) and the index
 * catch-ups it left to the shard's next owner (which catches up from the watermark at takeover).
 */
import type { IndexCatchUpStats, UnsettledStats } from '@seqline/seq';

/** One owner's counts (InboxOwner.indexCatchUps and .unsettledAppends). */
export interface OwnerCounts {
  indexCatchUps: IndexCatchUpStats;
  unsettledAppends: UnsettledStats;
}

export interface OwnerTallies extends OwnerCounts {
  /** Unsettled entries a dropped owner still held: never told of by anyone. */
  unsettledAbandoned: number;
  /** Pending index catch-ups a dropped owner left to the shard's next owner. */
  catchUpsHandedOn: number;
}

export class OwnerTallyBook {
  private readonly retired: OwnerTallies = emptyTallies();

  /** Keeps the totals of an owner that is gone; what it still held is counted apart. */
  retire(owner: OwnerCounts): void {
    const { indexCatchUps: c, unsettledAppends: u } = owner;
    this.retired.indexCatchUps.caughtUp += c.caughtUp;
    this.retired.indexCatchUps.gaveUp += c.gaveUp;
    this.retired.indexCatchUps.dropped += c.dropped;
    this.retired.unsettledAppends.landed += u.landed;
    this.retired.unsettledAppends.dropped += u.dropped;
    this.retired.unsettledAbandoned += u.held;
    this.retired.catchUpsHandedOn += c.pending;
  }

  /** The live owners' counts added to the retired totals. */
  sum(live: Iterable<OwnerCounts>): OwnerTallies {
    const total = emptyTallies();
    addInto(total, this.retired);
    total.unsettledAbandoned = this.retired.unsettledAbandoned;
    total.catchUpsHandedOn = this.retired.catchUpsHandedOn;
    for (const owner of live) addInto(total, owner);
    return total;
  }
}

function addInto(total: OwnerCounts, one: OwnerCounts): void {
  for (const k of Object.keys(total.indexCatchUps) as Array<keyof IndexCatchUpStats>) total.indexCatchUps[k] += one.indexCatchUps[k];
  for (const k of Object.keys(total.unsettledAppends) as Array<keyof UnsettledStats>) total.unsettledAppends[k] += one.unsettledAppends[k];
}

function emptyTallies(): OwnerTallies {
  return {
    indexCatchUps: { pending: 0, caughtUp: 0, gaveUp: 0, dropped: 0 },
    unsettledAppends: { held: 0, landed: 0, dropped: 0 },
    unsettledAbandoned: 0,
    catchUpsHandedOn: 0,
  };
}
