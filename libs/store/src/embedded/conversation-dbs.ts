/**
 * The LMDB rows of the conversation index (layout in keys.ts and docs/decisions.md) and the
 * reads both its writer (facts, inside the append's transaction) and its reader share.
 *
 * One sub-database holds every table, each row keyed [inbox, tag, …]: an append's index rows
 * (record, list order, item, watermark) sit next to each other, so a commit dirties one or two
 * leaf pages of one B-tree instead of a leaf in each of seven (measured: that, more than the
 * JavaScript, is what the index cost an fsync'd commit).
 */
import type { Database, Key } from 'lmdb';
import { BadRequestError, hasLoneSurrogate, type ConvRecord, type EditRef, type Entry } from '@seqline/core';
import { fromJsonRow, toJsonRow, type JsonRow } from './json-rows.ts';
import { MAX_KEY_NUMBER, MAX_KEY_PART_BYTES } from './keys.ts';
import type { AppinfoKey, SeqKey } from './seq-log.ts';

/** Row tags, the second key part, of space 0. */
const TAG = { record: 'r', order: 'o', item: 'i', deleted: 'd', edit: 'e', watermark: 'w' } as const;
type Table = keyof typeof TAG;
type Tags = Readonly<Record<Table, string>>;

/**
 * An inbox's index lives in one of two spaces: space 0's rows carry the tags above, space 1's
 * the same letters upper-cased. A rebuild writes the other space chunk by chunk and switches
 * with one write of [inbox, LIVE_TAG] (1: space 1 is live; absent: space 0), so no reader or
 * append ever sees a half-built index (conversation-rebuild.ts).
 */
export type IndexSpace = 0 | 1;
const SPACE_TAGS: readonly [Tags, Tags] = [
  TAG,
  Object.fromEntries(Object.entries(TAG).map(([table, tag]) => [table, tag.toUpperCase()])) as Tags,
];
const LIVE_TAG = 'g';

/** The tables of an index's content, in the order they are paged (the watermark is not content). */
const CONTENT_TABLES = ['record', 'order', 'item', 'deleted', 'edit'] as const;
export type ContentTable = (typeof CONTENT_TABLES)[number];
type KeyPart = string | number;

/**
 * A visible item's flags (an activity entry neither recalled nor deleted): whether it is a
 * counted message (from someone else) and whether it mentions the owner. It is unread while it
 * is counted and above max(readSeq, clearedSeq), so a read or clear moves the record's cursor
 * and writes no item row.
 */
export const ITEM_COUNTED = 1;
export const ITEM_MENTION = 2;

/**
 * A record as stored: its numbers in a fixed order (the conv comes back from the key), then the
 * title and its revision when it has one (rows written before titles end at asOfSeq).
 */
type RecordRow =
  | [lastSeq: number, lastMsgSeq: number, readSeq: number, clearedSeq: number, unread: number, mentions: number, asOfSeq: number]
  | [
      lastSeq: number,
      lastMsgSeq: number,
      readSeq: number,
      clearedSeq: number,
      unread: number,
      mentions: number,
      asOfSeq: number,
      title: string,
      titleRev: number,
    ];
type RowValue = RecordRow | string | number | true;

export const MAX_SEQ = MAX_KEY_NUMBER;

/** The inbox log the index is derived from (the timeline's SeqLog tables, read only here). */
export interface InboxLogDbs {
  entries: Database<JsonRow<Entry>, SeqKey>;
  appinfos: Database<number, AppinfoKey>;
}

function recordRow(rec: ConvRecord): RecordRow {
  const numbers = [rec.lastSeq, rec.lastMsgSeq, rec.readSeq, rec.clearedSeq, rec.unread, rec.mentions, rec.asOfSeq] as const;
  return rec.title === undefined ? [...numbers] : [...numbers, rec.title, rec.titleRev ?? 0];
}

/** Keys are `type:id` and a type never holds ':' (ids may: a buggy writer's, refused nowhere else). */
function convOf(convKey: string): ConvRecord['conv'] {
  const colon = convKey.indexOf(':');
  return { type: convKey.slice(0, colon) as ConvRecord['conv']['type'], id: convKey.slice(colon + 1) };
}

function recordOf(convKey: string, row: RecordRow): ConvRecord {
  const [lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq, title, titleRev] = row;
  const rec: ConvRecord = { conv: convOf(convKey), lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq };
  if (title !== undefined) {
    rec.title = title;
    rec.titleRev = titleRev ?? 0;
  }
  return rec;
}

/** Typed access to the one index sub-database; every method works inside or outside a write transaction. */
export class ConversationRows {
  private readonly tag: Tags;
  /** The other space's rows, over the same sub-database. */
  readonly other: ConversationRows;

  constructor(
    readonly db: Database<RowValue, Key>,
    readonly space: IndexSpace = 0,
    other?: ConversationRows,
  ) {
    this.tag = SPACE_TAGS[space];
    this.other = other ?? new ConversationRows(db, space === 0 ? 1 : 0, this);
  }

  /** The rows of `space` (this or `other`). */
  inSpace(space: IndexSpace): ConversationRows {
    return space === this.space ? this : this.other;
  }

  /** The space holding the inbox's index now: one point read (in a write transaction, of its state so far). */
  live(inbox: string): ConversationRows {
    return this.inSpace(this.db.get([inbox, LIVE_TAG]) === 1 ? 1 : 0);
  }

  /** Switches the inbox's index to this space: one small write. */
  makeLive(inbox: string): void {
    if (this.space === 1) void this.db.put([inbox, LIVE_TAG], 1);
    else void this.db.remove([inbox, LIVE_TAG]);
  }

  record(inbox: string, convKey: string): ConvRecord | undefined {
    const row = this.db.get([inbox, this.tag.record, convKey]) as RecordRow | undefined;
    return row === undefined ? undefined : recordOf(convKey, row);
  }

  putRecord(inbox: string, convKey: string, rec: ConvRecord): void {
    void this.db.put([inbox, this.tag.record, convKey], recordRow(rec));
  }

  /** Conversation keys by lastSeq, newest first, below `beforeLastSeq` (inclusive when `inclusive`). */
  orderDown(inbox: string, beforeLastSeq: number, inclusive: boolean, limit: number): Iterable<{ lastSeq: number; convKey: string }> {
    return this.db
      .getRange({
        start: [inbox, this.tag.order, beforeLastSeq],
        exclusiveStart: !inclusive,
        end: [inbox, this.tag.order, 0],
        reverse: true,
        limit,
      })
      .map(({ key, value }) => ({ lastSeq: (key as [string, string, number])[2], convKey: value as string }));
  }

  putOrder(inbox: string, lastSeq: number, convKey: string): void {
    void this.db.put([inbox, this.tag.order, lastSeq], convKey);
  }

  removeOrder(inbox: string, lastSeq: number): void {
    void this.db.remove([inbox, this.tag.order, lastSeq]);
  }

  /** Items of a conversation with aboveSeq < seq <= upToSeq, oldest first, with their flags. */
  itemsUp(inbox: string, convKey: string, aboveSeq: number, upToSeq: number): Iterable<{ seq: number; flags: number }> {
    return this.db
      .getRange({
        start: [inbox, this.tag.item, convKey, aboveSeq],
        exclusiveStart: true,
        end: [inbox, this.tag.item, convKey, upToSeq],
        inclusiveEnd: true,
      })
      .map(({ key, value }) => ({ seq: (key as [string, string, string, number])[3], flags: value as number }));
  }

  /** Item seqs of a conversation with aboveSeq < seq < beforeSeq, newest first; lazy, so a caller can stop early. */
  itemSeqsDown(inbox: string, convKey: string, beforeSeq: number, aboveSeq: number): Iterable<number> {
    return this.db
      .getKeys({
        start: [inbox, this.tag.item, convKey, beforeSeq],
        exclusiveStart: true,
        end: [inbox, this.tag.item, convKey, aboveSeq],
        reverse: true,
      })
      .map((key) => (key as [string, string, string, number])[3]);
  }

  item(inbox: string, convKey: string, seq: number): number | undefined {
    return this.db.get([inbox, this.tag.item, convKey, seq]) as number | undefined;
  }

  putItem(inbox: string, convKey: string, seq: number, flags: number): void {
    void this.db.put([inbox, this.tag.item, convKey, seq], flags);
  }

  removeItem(inbox: string, convKey: string, seq: number): void {
    void this.db.remove([inbox, this.tag.item, convKey, seq]);
  }

  isDeleted(inbox: string, seq: number): boolean {
    return this.db.doesExist([inbox, this.tag.deleted, seq]);
  }

  putDeleted(inbox: string, seq: number): void {
    void this.db.put([inbox, this.tag.deleted, seq], true);
  }

  /** The edit shown for a message seq; client JSON, so stored as JSON text like entries (json-rows.ts). */
  edit(inbox: string, seq: number): EditRef | undefined {
    return fromJsonRow(this.db.get([inbox, this.tag.edit, seq]) as JsonRow<EditRef> | undefined);
  }

  putEdit(inbox: string, seq: number, edit: EditRef): void {
    void this.db.put([inbox, this.tag.edit, seq], toJsonRow(edit));
  }

  watermark(inbox: string): number {
    return (this.db.get([inbox, this.tag.watermark]) as number | undefined) ?? 0;
  }

  putWatermark(inbox: string, seq: number): void {
    void this.db.put([inbox, this.tag.watermark], seq);
  }

  removeWatermark(inbox: string): void {
    void this.db.remove([inbox, this.tag.watermark]);
  }

  /**
   * Up to `limit` content rows of the inbox's index in this space after `after` (table by
   * table, each in key order; from the first when undefined): what a rebuild compares and
   * clears a page at a time.
   */
  rowsAfter(inbox: string, after: IndexRow | undefined, limit: number): IndexRow[] {
    const page: IndexRow[] = [];
    for (let t = after === undefined ? 0 : CONTENT_TABLES.indexOf(after.table); t < CONTENT_TABLES.length; t++) {
      const table = CONTENT_TABLES[t] as ContentTable;
      const tag = this.tag[table];
      const resume = after?.table === table;
      const range = this.db.getRange({
        start: resume ? [inbox, tag, ...after.parts] : [inbox, tag],
        exclusiveStart: resume,
        limit: limit - page.length,
      });
      for (const { key, value } of range) {
        const parts = key as KeyPart[];
        if (parts[0] !== inbox || parts[1] !== tag) break;
        page.push({ table, parts: parts.slice(2), value });
      }
      if (page.length === limit) break;
    }
    return page;
  }

  /** The value this space holds at `row`'s key. */
  valueAt(inbox: string, row: IndexRow): RowValue | undefined {
    return this.db.get([inbox, this.tag[row.table], ...row.parts]);
  }

  putRow(inbox: string, row: IndexRow): void {
    void this.db.put([inbox, this.tag[row.table], ...row.parts], row.value);
  }

  removeRow(inbox: string, row: IndexRow): void {
    void this.db.remove([inbox, this.tag[row.table], ...row.parts]);
  }

  /** The conversation a row names, if it names one (records, list order, items). */
  static convKeyOf(row: IndexRow): string | undefined {
    if (row.table === 'record' || row.table === 'item') return row.parts[0] as string;
    if (row.table === 'order') return row.value as string;
    return undefined;
  }

  /** The entry seq a deleted or edit row is about. */
  static seqOf(row: IndexRow): number | undefined {
    return row.table === 'deleted' || row.table === 'edit' ? (row.parts[0] as number) : undefined;
  }
}

/** One content row of an inbox's index, named apart from its space: its table, the key parts after the tag, its value. */
export interface IndexRow {
  table: ContentTable;
  parts: KeyPart[];
  value: RowValue;
}

/**
 * A conversation key becomes a key part: too long and LMDB refuses the key mid-write; an
 * unpaired surrogate would be written as U+FFFD and merge two conversations. The edge never
 * lets such an id through (ID_PATTERN); a writer that does gets its whole append refused.
 */
export function assertStorableConvKey(convKey: string): void {
  if (!isStorableConvKey(convKey)) {
    throw new BadRequestError(`conversation id longer than ${MAX_KEY_PART_BYTES} UTF-8 bytes or with an unpaired UTF-16 surrogate`);
  }
}

/** Readers ask this first: a key that could never be stored has no rows (and must not be encoded). */
export function isStorableConvKey(convKey: string): boolean {
  return Buffer.byteLength(convKey, 'utf8') <= MAX_KEY_PART_BYTES && !hasLoneSurrogate(convKey);
}
