/**
 * The writer of the conversation index on LMDB: an AppendHook of the inbox SeqLog. For an
 * append it first computes every entry's changes (core's indexEntrySync) against an overlay of
 * the changes computed so far over the stored rows, and only then writes — so a throw (an
 * entry the index refuses) fails the whole append with nothing written, entries included.
 *
 * Items are stored once per visible entry with counted/mention flags (conversation-dbs.ts):
 * core's unread rows are derived from them and the record's cursors, so unreadRemove of a read
 * or clear writes nothing, and unreadAdd is the flag of its visibleAdd.
 */
import {
  applyToConversations,
  conversationFactsNeeded,
  conversationKey,
  dedupKeyOf,
  emptyFacts,
  emptyFactsRequest,
  InternalError,
  isActivity,
  LruMap,
  readsOnSend,
  splitKey,
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
import {
  assertStorableConvKey,
  ITEM_COUNTED,
  ITEM_MENTION,
  MAX_SEQ,
  type ConversationRows,
  type IndexSpace,
  type InboxLogDbs,
} from './conversation-dbs.ts';
import { fromJsonRow } from './json-rows.ts';
import { NOT_READY, type AppendHook, type NotReady } from './seq-log.ts';

/** Unread = counted and above both cursors. */
export function unreadCursor(rec: Pick<ConvRecord, 'readSeq' | 'clearedSeq'>): number {
  return Math.max(rec.readSeq, rec.clearedSeq);
}

/** Rows of one append not written yet; an item mapped to null is deleted. */
class PendingIndex {
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

/** More rounds than core's planner ever needs (two) means the overlay is not answering. */
const MAX_ROUNDS = 4;

/**
 * Core's indexEntrySync loop, with the one round an activity entry needs (its record, and the
 * unread items its owner's own message reads) answered before the first plan: one planning
 * pass fewer for nearly every entry. Core still says what is missing, so a wrong guess costs a
 * round, never a wrong count.
 */
function indexEntry(entry: Entry, self: string, pending: PendingIndex): ConversationChanges {
  const facts = emptyFacts();
  if (isActivity(entry)) {
    const convKey = conversationKey(entry.conv);
    const first = emptyFactsRequest();
    first.convKeys.push(convKey);
    if (readsOnSend(entry, self)) first.unreadUpTo.push({ convKey, upToSeq: entry.seq });
    pending.answer(first, facts);
  }
  for (let round = 0; ; round++) {
    const need = conversationFactsNeeded(entry, facts, self);
    if (need === null) return applyToConversations(entry, facts, self);
    if (round === MAX_ROUNDS) throw new InternalError(`conversation facts not answered for seq ${entry.seq}`);
    pending.answer(need, facts);
  }
}

/** Inboxes whose watermark the writer remembers (≈ 125 bytes each, measured, key included): about 12 MiB at most. */
export const MAX_REMEMBERED_WATERMARKS = 100_000;

/**
 * Core's fold of `entries` (in seq order, above the watermark of `rows`) over the index as
 * stored in `rows`, into `pending` (a new overlay when none): nothing is written yet. The one
 * fold of every index write — an append, a catch-up, a rebuild (conversation-chunks.ts).
 */
export function foldEntries(
  rows: ConversationRows,
  log: InboxLogDbs,
  inbox: string,
  entries: readonly Entry[],
  pending = new PendingIndex(inbox, rows, log),
): PendingIndex {
  const self = splitKey(inbox).id;
  for (const entry of entries) {
    pending.addEntry(entry);
    pending.apply(indexEntry(entry, self, pending));
  }
  return pending;
}

export type { PendingIndex };

/**
 * The index's catch-up out of the append path (conversation-chunks.ts): for an index more than
 * `chunk` entries behind its log, which one append's transaction must not fold.
 */
export interface ChunkedCatchUp {
  readonly chunk: number;
  /** Undefined: the inbox may be appended to now; else resolves once it may (append-hook `ready`). */
  ready(inbox: string, remembered: boolean): Promise<Error | undefined> | undefined;
}

/** The memo of an inbox's index: its watermark, as -1 - watermark when the index lives in space 1 (one number each). */
function memo(space: IndexSpace, watermark: number): number {
  return space === 0 ? watermark : -1 - watermark;
}

function memoSpace(value: number): IndexSpace {
  return value < 0 ? 1 : 0;
}

function memoWatermark(value: number): number {
  return value < 0 ? -1 - value : value;
}

export class LmdbConversationIndexWriter implements AppendHook<IndexedConversations> {
  /**
   * Watermarks this process wrote (with the space written, see memo()), so an append need not
   * read its inbox's rows. Trusted only when equal to the log head before the append: a commit
   * that failed leaves the head below it. Bounded like the CQL writer's memory (least recently
   * written inboxes go first): a forgotten inbox costs point reads of its live space and stored
   * watermark, inside the append's transaction.
   */
  private readonly written: LruMap<string, number>;

  /** Without `catchUp`, an index behind its log is caught up inside the next append's transaction, however far behind. */
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
    maxRemembered = MAX_REMEMBERED_WATERMARKS,
    private readonly catchUp?: ChunkedCatchUp,
  ) {
    this.written = new LruMap<string, number>(maxRemembered);
  }

  /** Inboxes whose watermark is remembered (at most the bound). */
  get rememberedWatermarks(): number {
    return this.written.size;
  }

  ready(inbox: string): Promise<Error | undefined> | undefined {
    return this.catchUp?.ready(inbox, this.written.get(inbox) !== undefined);
  }

  prepare(
    inbox: string,
    headBefore: number,
    written: readonly Entry[],
    derive: boolean,
  ): (() => IndexedConversations | undefined) | NotReady {
    for (const entry of written) assertStorableConvKey(conversationKey(entry.conv));
    const remembered = this.written.get(inbox);
    const rows = remembered === undefined ? this.rows.live(inbox) : this.rows.inSpace(memoSpace(remembered));
    const behind = this.behind(rows, inbox, headBefore, remembered);
    if (behind === NOT_READY) {
      this.written.delete(inbox); // so that `ready` looks at the stored index
      return NOT_READY;
    }
    const pending = foldEntries(rows, this.log, inbox, [...behind, ...written]);
    for (const key of pending.records.keys()) assertStorableConvKey(key);
    const indexed = derive ? pending.indexed() : undefined;
    return () => {
      pending.write();
      this.written.set(inbox, memo(rows.space, pending.watermark));
      return indexed;
    };
  }

  /** Forgets what this process knows of the inbox's index (its rows were replaced, or its space switched). */
  forget(inbox: string): void {
    this.written.delete(inbox);
  }

  /**
   * Entries the index is not exact at yet: none in normal operation (it is written with every
   * append); after its rows were dropped, the entries above its watermark, folded here when they
   * are at most a chunk (NOT_READY otherwise: the chunked catch-up folds them first).
   */
  private behind(rows: ConversationRows, inbox: string, headBefore: number, remembered: number | undefined): Entry[] | NotReady {
    if (remembered !== undefined && memoWatermark(remembered) === headBefore) return [];
    const watermark = rows.watermark(inbox);
    if (watermark >= headBefore) return [];
    if (this.catchUp !== undefined && headBefore - watermark > this.catchUp.chunk) return NOT_READY;
    const range = this.log.entries.getRange({
      start: [inbox, watermark],
      exclusiveStart: true,
      end: [inbox, headBefore],
      inclusiveEnd: true,
    });
    return Array.from(range, ({ value }) => fromJsonRow(value));
  }
}
