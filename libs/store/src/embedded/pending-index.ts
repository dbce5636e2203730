/**
 * The overlay of one conversation-index write (conversation-writer.ts): the rows an append (or a
 * catch-up, or a rebuild) changes, answering core's lookups before they are written.
 *
 * Items are stored once per visible entry with counted/mention flags (conversation-dbs.ts):
 * core's unread rows are derived from them and the record's cursors, so unreadRemove of a read
 * or clear writes nothing, and unreadAdd is the flag of its visibleAdd.
 */
import {
  conversationKey,
  dedupKeyOf,
  InternalError,
  withLatestEdit,
  type ConversationChanges,
  type ConversationFacts,
  type ConversationState,
  type ConvRecord,
  type DedupKey,
  type EditRef,
  type Entry,
  type FactsRequest,
  type IndexedConversations,
  type UnreadItem,
} from '@seqline/core';
import { ITEM_COUNTED, ITEM_MENTION, MAX_SEQ, type ConversationRows, type InboxLogDbs } from './conversation-dbs.ts';
import { fromJsonRow } from './json-rows.ts';

/** Unread = counted and above both cursors. */
export function unreadCursor(rec: Pick<ConvRecord, 'readSeq' | 'clearedSeq'>): number {
  return Math.max(rec.readSeq, rec.clearedSeq);
}

/** Rows of one append not written yet; an item mapped to null is deleted. */
export class PendingIndex {
  readonly records = new Map<string, ConvRecord>();
  /** Records as stored before this append (null: none), to re-key the list from. */
  private readonly stored = new Map<string, ConvRecord | null>();
  /** convKey → seq → flags (null: removed). */
  readonly items = new Map<string, Map<number, number | null>>();
  readonly deleted = new Set<number>();
  readonly edits = new Map<number, EditRef>();
  private readonly bySeq = new Map<number, Entry>();
  private readonly byKey = new Map<DedupKey, Entry>();
  /** The seq of the last entry applied: what the index is exact at once written. */
  watermark = 0;

  constructor(
    readonly inbox: string,
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
  ) {}

  /** An entry of the log being appended (or caught up): visible to the facts of later entries. */
  addEntry(entry: Entry): void {
    this.bySeq.set(entry.seq, entry);
    this.byKey.set(dedupKeyOf(entry), entry);
  }

  apply(ch: ConversationChanges): void {
    for (const { after } of ch.records) this.records.set(conversationKey(after.conv), after);
    const flags = new Map<string, number>();
    for (const i of ch.unreadAdd) flags.set(`${i.convKey}|${i.seq}`, ITEM_COUNTED | (i.mention ? ITEM_MENTION : 0));
    for (const i of ch.visibleAdd) {
      const key = `${i.convKey}|${i.seq}`;
      this.itemsOf(i.convKey).set(i.seq, flags.get(key) ?? 0);
      flags.delete(key);
    }
    if (flags.size > 0) throw new InternalError(`conversation index: unread item without its visible item at seq ${ch.seq}`);
    for (const i of ch.visibleRemove) this.itemsOf(i.convKey).set(i.seq, null);
    for (const i of ch.unreadRemove) {
      // Implied by the row's removal or by a cursor now at or above it; anything else would drift.
      const rec = this.records.get(i.convKey);
      if (this.itemsOf(i.convKey).get(i.seq) !== null && (rec === undefined || i.seq > unreadCursor(rec))) {
        throw new InternalError(`conversation index: unread item ${i.convKey}|${i.seq} removed without a cursor or row change`);
      }
    }
    for (const seq of ch.deleted) this.deleted.add(seq);
    for (const { seq, edit } of ch.edits) this.edits.set(seq, edit);
    this.watermark = ch.seq;
  }

  private itemsOf(convKey: string): Map<number, number | null> {
    let items = this.items.get(convKey);
    if (items === undefined) {
      items = new Map();
      this.items.set(convKey, items);
    }
    return items;
  }

  private record(convKey: string): ConvRecord | null {
    const pending = this.records.get(convKey);
    if (pending !== undefined) return pending;
    let stored = this.stored.get(convKey);
    if (stored === undefined) {
      stored = this.rows.record(this.inbox, convKey) ?? null;
      this.stored.set(convKey, stored);
    }
    return stored;
  }

  /** Answers core's lookups from this overlay, then the stored rows (all inside the write txn). */
  answer(need: FactsRequest, facts: ConversationFacts): void {
    const { inbox, rows } = this;
    for (const key of need.convKeys) facts.records.set(key, this.record(key));
    for (const key of need.keys) {
      const seq = this.byKey.get(key)?.seq ?? this.log.appinfos.get([inbox, key]);
      facts.byKey.set(key, seq === undefined ? null : this.entry(seq));
    }
    for (const seq of need.seqs) facts.bySeq.set(seq, this.entry(seq));
    for (const seq of need.edits) facts.edits.set(seq, this.edits.get(seq) ?? rows.edit(inbox, seq) ?? null);
    for (const { convKey, upToSeq } of need.unreadUpTo) facts.unreadUpTo.set(convKey, this.unreadUpTo(convKey, upToSeq));
    for (const { convKey, seq } of need.unreadAt) {
      const rec = this.record(convKey);
      const flags = this.flags(convKey, seq);
      const unread = rec !== null && flags !== undefined && (flags & ITEM_COUNTED) !== 0 && seq > unreadCursor(rec);
      facts.unreadAt.set(`${convKey}|${seq}`, unread ? { convKey, seq, mention: (flags & ITEM_MENTION) !== 0 } : null);
    }
    for (const { convKey, excluding } of need.newestVisible) facts.newestVisible.set(convKey, this.newestVisible(convKey, excluding));
  }

  private entry(seq: number): Entry | null {
    return this.bySeq.get(seq) ?? fromJsonRow(this.log.entries.get([this.inbox, seq])) ?? null;
  }

  /** An item's flags as of this overlay; undefined when it is not (or no longer) visible. */
  private flags(convKey: string, seq: number): number | undefined {
    const pending = this.items.get(convKey)?.get(seq);
    if (pending !== undefined) return pending ?? undefined;
    return this.rows.item(this.inbox, convKey, seq);
  }

  /** Counted items above the record's cursor up to upToSeq: the unread ones a read or clear removes. */
  private unreadUpTo(convKey: string, upToSeq: number): UnreadItem[] {
    const rec = this.record(convKey);
    if (rec === null) return [];
    const above = unreadCursor(rec);
    const found = new Map<number, number | null>();
    if (upToSeq > above) for (const { seq, flags } of this.rows.itemsUp(this.inbox, convKey, above, upToSeq)) found.set(seq, flags);
    for (const [seq, flags] of this.items.get(convKey) ?? []) if (seq > above && seq <= upToSeq) found.set(seq, flags);
    const items: UnreadItem[] = [];
    for (const [seq, flags] of found) {
      if (flags !== null && (flags & ITEM_COUNTED) !== 0) items.push({ convKey, seq, mention: (flags & ITEM_MENTION) !== 0 });
    }
    return items.sort((a, b) => a.seq - b.seq);
  }

  private newestVisible(convKey: string, excluding: readonly number[]): number | null {
    const pending = this.items.get(convKey);
    let newest: number | null = null;
    for (const [seq, flags] of pending ?? []) {
      if (flags !== null && !excluding.includes(seq) && (newest === null || seq > newest)) newest = seq;
    }
    // Stored rows below the newest pending one cannot win; the first acceptable one from the top does.
    for (const seq of this.rows.itemSeqsDown(this.inbox, convKey, MAX_SEQ, newest ?? 0)) {
      if (excluding.includes(seq) || pending?.get(seq) === null) continue;
      return seq;
    }
    return newest;
  }

  /**
   * The touched conversations as this overlay leaves them, each with its `last` (an entry of
   * this append, or read from the log inside the transaction): what the append's caller is told.
   */
  indexed(): IndexedConversations {
    const states: ConversationState[] = [];
    for (const rec of this.records.values()) {
      const seq = rec.lastMsgSeq;
      const entry = seq === 0 ? null : this.entry(seq);
      // An entry of this append has no stored edit: any edit of it comes later in the append.
      const edit = this.edits.get(seq) ?? (this.bySeq.has(seq) ? null : (this.rows.edit(this.inbox, seq) ?? null));
      states.push({ ...rec, last: entry === null ? null : withLatestEdit(entry, edit) });
    }
    return { watermark: this.watermark, states };
  }

  /** Writes the overlay; runs after every check, inside the same write transaction. */
  write(): void {
    const { inbox, rows } = this;
    for (const [key, rec] of this.records) {
      const before = this.stored.get(key) ?? null;
      rows.putRecord(inbox, key, rec);
      if (before?.lastSeq === rec.lastSeq) continue;
      if (before !== null) rows.removeOrder(inbox, before.lastSeq);
      rows.putOrder(inbox, rec.lastSeq, key);
    }
    for (const [convKey, items] of this.items) {
      for (const [seq, flags] of items) {
        // A row added and removed within this append was never stored (remove is a no-op).
        if (flags === null) rows.removeItem(inbox, convKey, seq);
        else rows.putItem(inbox, convKey, seq, flags);
      }
    }
    for (const seq of this.deleted) rows.putDeleted(inbox, seq);
    for (const [seq, edit] of this.edits) rows.putEdit(inbox, seq, edit);
    rows.putWatermark(inbox, this.watermark);
  }
}
