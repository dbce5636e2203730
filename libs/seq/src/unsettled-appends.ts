/**
 * Appends whose outcome the owner does not know. A store append that fails may still have
 * landed (a write timeout, a connection lost after the write was sent: Cassandra cannot say).
 * Such entries are in the inbox, but nobody was told: no push, no append listener (so no offline
 * notification), no index catch-up. A resend then finds them and answers `duplicate`, which tells
 * nobody either. So the owner keeps the entries of a failed append, and when it next reads the
 * inbox's head from the store (the next operation on the inbox, usually the resend) it reads
 * back the ones at or below the head; it tells everyone of those that landed once its next store
 * write succeeds, as an append would have. Not before: a write that succeeds proves the owner
 * still holds the inbox (a fenced store refuses otherwise), and a deposed owner's late write is
 * range-deleted by its successor, so telling of it would name an entry that does not stay.
 *
 * Bounded: at most `maxEntries` entries kept across the owner's inboxes; a failed append past
 * the bound is not kept (logged and counted): its entries, if they landed, reach sockets by
 * sync and the index by the next catch-up, but no notification names them.
 */
import { dedupKeyOf, type Entry, type InboxKey, type Logger, type TimelineStore } from '@seqline/core';
import type { InboxState } from './inbox-queue.ts';
import type { PushPublisher } from './push-publisher.ts';

export const DEFAULT_MAX_UNSETTLED_ENTRIES = 10_000;

/** Who an append tells (the owner's AppendContext). */
export interface SettleContext {
  timeline: Pick<TimelineStore, 'readAfter'>;
  pushes: Pick<PushPublisher, 'publish'>;
  appended?: (inbox: InboxKey, entries: Entry[]) => void;
  indexBehind?: (inbox: InboxKey) => void;
}

export interface UnsettledStats {
  /** Entries of failed appends waiting for their inbox's next head read. */
  held: number;
  /** Entries found stored at that read, and told of then. */
  landed: number;
  /** Failed appends not kept, past the bound. */
  dropped: number;
}

export class UnsettledAppends {
  private held = 0;
  private landed = 0;
  private dropped = 0;

  constructor(
    private readonly logger: Logger,
    private readonly maxEntries: number = DEFAULT_MAX_UNSETTLED_ENTRIES,
  ) {}

  /** An append of `entries` failed at `state`, whose head was `headBefore`. */
  note(state: InboxState, headBefore: number, entries: Entry[]): void {
    // Entries found landed but not told yet are read back again at the next head read.
    const l = state.landed;
    if (l !== undefined) {
      state.landed = undefined;
      const u = state.unsettled;
      state.unsettled = u ? { headBefore: Math.min(u.headBefore, l.headBefore), entries: [...l.entries, ...u.entries] } : l;
    }
    if (this.held + entries.length > this.maxEntries) {
      this.dropped++;
      this.logger.warn(
        { inbox: state.inbox, entries: entries.length, bound: this.maxEntries },
        'failed append not kept for settling: bound reached',
      );
      return;
    }
    this.held += entries.length;
    const u = state.unsettled;
    state.unsettled = u ? { headBefore: Math.min(u.headBefore, headBefore), entries: [...u.entries, ...entries] } : { headBefore, entries };
  }

  /**
   * Called with the head just read from the store, before the state writes again: tells of the
   * kept entries that landed. Throws if the read back fails (the entries stay kept).
   */
  async settle(ctx: SettleContext, state: InboxState, storeHead: number): Promise<void> {
    const u = state.unsettled;
    if (u === undefined) return;
    // Entries above the head did not land; the head covers every one that did (seqs only grow).
    const candidates = new Map(u.entries.filter((e) => e.seq <= storeHead).map((e) => [e.seq, e]));
    let landed: Entry[] = [];
    if (candidates.size > 0) {
      const seqs = [...candidates.keys()];
      const lo = Math.min(...seqs);
      const read = await ctx.timeline.readAfter({ inbox: state.inbox, afterSeq: lo - 1, limit: Math.max(...seqs) - lo + 1 });
      landed = read.filter((e) => {
        const tried = candidates.get(e.seq);
        return tried !== undefined && dedupKeyOf(tried) === dedupKeyOf(e);
      });
    }
    state.unsettled = undefined;
    this.held -= u.entries.length - landed.length;
    // Not remembered as recent: a resend goes to the store, which answers with the original.
    if (landed.length > 0) state.landed = { headBefore: u.headBefore, entries: landed };
  }

  /** After a store write of the state succeeded: tells of the entries found landed, before the write's own push. */
  tell(ctx: SettleContext, state: InboxState): void {
    const l = state.landed;
    if (l === undefined) return;
    state.landed = undefined;
    this.held -= l.entries.length;
    this.landed += l.entries.length;
    ctx.pushes.publish(state.inbox, l.headBefore, l.entries);
    ctx.appended?.(state.inbox, l.entries);
    ctx.indexBehind?.(state.inbox);
  }

  stats(): UnsettledStats {
    return { held: this.held, landed: this.landed, dropped: this.dropped };
  }
}
