/**
 * The writer of the conversation index on LMDB: an AppendHook of the inbox SeqLog. For an
 * append it first computes every entry's changes (core's indexEntrySync) against an overlay of
 * the changes computed so far over the stored tables, and only then writes — so a throw (an
 * entry the index refuses) fails the whole append with nothing written, entries included.
 */
import {
  conversationItemKey,
  conversationKey,
  indexEntrySync,
  splitKey,
  type ConversationChanges,
  type ConversationFacts,
  type ConvRecord,
  type EditRef,
  type Entry,
  type FactsRequest,
  type UnreadItem,
} from '@seqline/core';
import {
  assertStorableConvKey,
  MAX_SEQ,
  unreadRowsUpTo,
  visibleSeqsDown,
  type ConversationDbs,
  type InboxLogDbs,
} from './conversation-dbs.ts';
import { fromJsonRow, toJsonRow } from './json-rows.ts';
import type { AppendHook } from './seq-log.ts';

interface ItemRow {
  convKey: string;
  seq: number;
}

/** Rows of one append not written yet; a row mapped to null is deleted. */
class PendingIndex {
  readonly records = new Map<string, ConvRecord>();
  /** lastSeq → convKey; null: the conversation moved away from this lastSeq. */
  readonly order = new Map<number, string | null>();
  readonly unread = new Map<string, (ItemRow & { mention: boolean }) | null>();
  readonly visible = new Map<string, ItemRow | null>();
  readonly deleted = new Set<number>();
  readonly edits = new Map<number, EditRef>();
  readonly bySeq = new Map<number, Entry>();
  readonly byAppinfo = new Map<string, Entry>();
  /** The seq of the last entry applied: what the index is exact at once written. */
  watermark = 0;

  constructor(
    readonly inbox: string,
    private readonly dbs: ConversationDbs,
    private readonly log: InboxLogDbs,
  ) {}

  /** An entry of the log being appended (or caught up): visible to the facts of later entries. */
  addEntry(entry: Entry): void {
    this.bySeq.set(entry.seq, entry);
    this.byAppinfo.set(entry.appinfo, entry);
  }

  apply(ch: ConversationChanges): void {
    for (const { before, after } of ch.records) {
      const key = conversationKey(after.conv);
      this.records.set(key, after);
      if (before !== null && before.lastSeq !== after.lastSeq) this.order.set(before.lastSeq, null);
      this.order.set(after.lastSeq, key);
    }
    for (const i of ch.unreadRemove) this.unread.set(conversationItemKey(i.convKey, i.seq), null);
    for (const i of ch.unreadAdd)
      this.unread.set(conversationItemKey(i.convKey, i.seq), { convKey: i.convKey, seq: i.seq, mention: i.mention });
    for (const i of ch.visibleRemove) this.visible.set(conversationItemKey(i.convKey, i.seq), null);
    for (const i of ch.visibleAdd) this.visible.set(conversationItemKey(i.convKey, i.seq), { convKey: i.convKey, seq: i.seq });
    for (const seq of ch.deleted) this.deleted.add(seq);
    for (const { seq, edit } of ch.edits) this.edits.set(seq, edit);
    this.watermark = ch.seq;
  }

  /** Answers core's lookups from this overlay, then the stored tables (all inside the write txn). */
  answer(need: FactsRequest, facts: ConversationFacts): void {
    const { inbox, dbs } = this;
    for (const key of need.convKeys) facts.records.set(key, this.records.get(key) ?? dbs.records.get([inbox, key]) ?? null);
    for (const appinfo of need.appinfos) {
      const seq = this.byAppinfo.get(appinfo)?.seq ?? this.log.appinfos.get([inbox, appinfo]);
      facts.byAppinfo.set(appinfo, seq === undefined ? null : this.entry(seq));
    }
    for (const seq of need.seqs) facts.bySeq.set(seq, this.entry(seq));
    for (const seq of need.edits) facts.edits.set(seq, this.edits.get(seq) ?? fromJsonRow(dbs.edits.get([inbox, seq])) ?? null);
    for (const { convKey, upToSeq } of need.unreadUpTo) facts.unreadUpTo.set(convKey, this.unreadUpTo(convKey, upToSeq));
    for (const { convKey, seq } of need.unreadAt) {
      const key = conversationItemKey(convKey, seq);
      const pending = this.unread.get(key);
      const stored = pending === undefined ? dbs.unread.get([inbox, convKey, seq]) : undefined;
      const item: UnreadItem | null = pending ?? (stored === undefined ? null : { convKey, seq, mention: stored });
      facts.unreadAt.set(key, item);
    }
    for (const { convKey, excluding } of need.newestVisible) facts.newestVisible.set(convKey, this.newestVisible(convKey, excluding));
  }

  private entry(seq: number): Entry | null {
    return this.bySeq.get(seq) ?? fromJsonRow(this.log.entries.get([this.inbox, seq])) ?? null;
  }

  private unreadUpTo(convKey: string, upToSeq: number): UnreadItem[] {
    const items = new Map<number, UnreadItem>();
    for (const row of unreadRowsUpTo(this.dbs, this.inbox, convKey, upToSeq)) {
      if (this.unread.get(conversationItemKey(convKey, row.seq)) !== null) items.set(row.seq, { convKey, ...row });
    }
    for (const row of this.unread.values()) {
      if (row !== null && row.convKey === convKey && row.seq <= upToSeq) items.set(row.seq, { ...row });
    }
    return [...items.values()].sort((a, b) => a.seq - b.seq);
  }

  private newestVisible(convKey: string, excluding: readonly number[]): number | null {
    let newest: number | null = null;
    for (const row of this.visible.values()) {
      if (row !== null && row.convKey === convKey && !excluding.includes(row.seq) && (newest === null || row.seq > newest))
        newest = row.seq;
    }
    // Stored rows below the newest pending one cannot win; the first acceptable one from the top does.
    for (const seq of visibleSeqsDown(this.dbs, this.inbox, convKey, MAX_SEQ, newest ?? 0)) {
      if (excluding.includes(seq) || this.visible.get(conversationItemKey(convKey, seq)) === null) continue;
      return seq;
    }
    return newest;
  }

  /** Writes the overlay; runs after every check, inside the same write transaction. */
  write(): void {
    const { inbox, dbs } = this;
    for (const [key, rec] of this.records) dbs.records.put([inbox, key], rec);
    for (const [lastSeq, key] of this.order) {
      if (key === null) dbs.order.remove([inbox, lastSeq]);
      else dbs.order.put([inbox, lastSeq], key);
    }
    for (const row of this.unread.values()) if (row !== null) dbs.unread.put([inbox, row.convKey, row.seq], row.mention);
    for (const row of this.visible.values()) if (row !== null) dbs.visible.put([inbox, row.convKey, row.seq], true);
    // Removals by key: a row added and removed within this append was never stored (remove is a no-op).
    for (const [key, row] of this.unread) if (row === null) dbs.unread.remove([inbox, ...itemOf(key)]);
    for (const [key, row] of this.visible) if (row === null) dbs.visible.remove([inbox, ...itemOf(key)]);
    for (const seq of this.deleted) dbs.deleted.put([inbox, seq], true);
    for (const [seq, edit] of this.edits) dbs.edits.put([inbox, seq], toJsonRow(edit));
    dbs.watermark.put(inbox, this.watermark);
  }
}

/** Splits a conversationItemKey; its seq is after the last '|' (a convKey may hold one). */
function itemOf(itemKey: string): [string, number] {
  const bar = itemKey.lastIndexOf('|');
  return [itemKey.slice(0, bar), Number(itemKey.slice(bar + 1))];
}

export class ConversationIndexWriter implements AppendHook {
  constructor(
    private readonly dbs: ConversationDbs,
    private readonly log: InboxLogDbs,
  ) {}

  prepare(inbox: string, headBefore: number, written: readonly Entry[]): () => void {
    for (const entry of written) assertStorableConvKey(conversationKey(entry.conv));
    const self = splitKey(inbox).id;
    const pending = new PendingIndex(inbox, this.dbs, this.log);
    for (const entry of [...this.behind(inbox, headBefore), ...written]) {
      pending.addEntry(entry);
      pending.apply(indexEntrySync(entry, self, (need, facts) => pending.answer(need, facts)));
    }
    for (const key of pending.records.keys()) assertStorableConvKey(key);
    return () => pending.write();
  }

  /**
   * Entries the index is not exact at yet: none in normal operation (it is written with every
   * append); after a rebuild dropped it, the whole inbox, indexed by the next append.
   */
  private behind(inbox: string, headBefore: number): Entry[] {
    const watermark = this.dbs.watermark.get(inbox) ?? 0;
    if (watermark >= headBefore) return [];
    const range = this.log.entries.getRange({
      start: [inbox, watermark],
      exclusiveStart: true,
      end: [inbox, headBefore],
      inclusiveEnd: true,
    });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }
}
