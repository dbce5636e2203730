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

/** Row tags, the second key part. */
const TAG = { record: 'r', order: 'o', item: 'i', deleted: 'd', edit: 'e', watermark: 'w' } as const;

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
  constructor(readonly db: Database<RowValue, Key>) {}

  record(inbox: string, convKey: string): ConvRecord | undefined {
    const row = this.db.get([inbox, TAG.record, convKey]) as RecordRow | undefined;
    return row === undefined ? undefined : recordOf(convKey, row);
  }

  putRecord(inbox: string, convKey: string, rec: ConvRecord): void {
    void this.db.put([inbox, TAG.record, convKey], recordRow(rec));
  }

  /** Conversation keys by lastSeq, newest first, below `beforeLastSeq` (inclusive when `inclusive`). */
  orderDown(inbox: string, beforeLastSeq: number, inclusive: boolean, limit: number): Iterable<{ lastSeq: number; convKey: string }> {
    return this.db
      .getRange({ start: [inbox, TAG.order, beforeLastSeq], exclusiveStart: !inclusive, end: [inbox, TAG.order, 0], reverse: true, limit })
      .map(({ key, value }) => ({ lastSeq: (key as [string, string, number])[2], convKey: value as string }));
  }

  putOrder(inbox: string, lastSeq: number, convKey: string): void {
    void this.db.put([inbox, TAG.order, lastSeq], convKey);
  }

  removeOrder(inbox: string, lastSeq: number): void {
    void this.db.remove([inbox, TAG.order, lastSeq]);
  }

  /** Items of a conversation with aboveSeq < seq <= upToSeq, oldest first, with their flags. */
  itemsUp(inbox: string, convKey: string, aboveSeq: number, upToSeq: number): Iterable<{ seq: number; flags: number }> {
    return this.db
      .getRange({
        start: [inbox, TAG.item, convKey, aboveSeq],
        exclusiveStart: true,
        end: [inbox, TAG.item, convKey, upToSeq],
        inclusiveEnd: true,
      })
      .map(({ key, value }) => ({ seq: (key as [string, string, string, number])[3], flags: value as number }));
  }

  /** Item seqs of a conversation with aboveSeq < seq < beforeSeq, newest first; lazy, so a caller can stop early. */
  itemSeqsDown(inbox: string, convKey: string, beforeSeq: number, aboveSeq: number): Iterable<number> {
    return this.db
      .getKeys({
        start: [inbox, TAG.item, convKey, beforeSeq],
        exclusiveStart: true,
        end: [inbox, TAG.item, convKey, aboveSeq],
        reverse: true,
      })
      .map((key) => (key as [string, string, string, number])[3]);
  }

  item(inbox: string, convKey: string, seq: number): number | undefined {
    return this.db.get([inbox, TAG.item, convKey, seq]) as number | undefined;
  }

  putItem(inbox: string, convKey: string, seq: number, flags: number): void {
    void this.db.put([inbox, TAG.item, convKey, seq], flags);
  }

  removeItem(inbox: string, convKey: string, seq: number): void {
    void this.db.remove([inbox, TAG.item, convKey, seq]);
  }

  isDeleted(inbox: string, seq: number): boolean {
    return this.db.doesExist([inbox, TAG.deleted, seq]);
  }

  putDeleted(inbox: string, seq: number): void {
    void this.db.put([inbox, TAG.deleted, seq], true);
  }

  /** The edit shown for a message seq; client JSON, so stored as JSON text like entries (json-rows.ts). */
  edit(inbox: string, seq: number): EditRef | undefined {
    return fromJsonRow(this.db.get([inbox, TAG.edit, seq]) as JsonRow<EditRef> | undefined);
  }

  putEdit(inbox: string, seq: number, edit: EditRef): void {
    void this.db.put([inbox, TAG.edit, seq], toJsonRow(edit));
  }

  watermark(inbox: string): number {
    return (this.db.get([inbox, TAG.watermark]) as number | undefined) ?? 0;
  }

  putWatermark(inbox: string, seq: number): void {
    void this.db.put([inbox, TAG.watermark], seq);
  }

  /** Every row of the inbox's index but its watermark (rebuild compares and replaces them). */
  storedRows(inbox: string): IndexRow[] {
    const rows = this.db.getRange({ start: [inbox], end: [inbox, '\u{10FFFF}'] });
    return Array.from(rows, ({ key, value }) => ({ key: key as IndexRow['key'], value })).filter((row) => row.key[1] !== TAG.watermark);
  }

  /** The rows that store `index` (what the incremental writer would have written). */
  rowsOf(inbox: string, index: IndexContent): IndexRow[] {
    const rows: IndexRow[] = [];
    for (const [convKey, rec] of index.records) {
      rows.push({ key: [inbox, TAG.record, convKey], value: recordRow(rec) });
      rows.push({ key: [inbox, TAG.order, rec.lastSeq], value: convKey });
    }
    for (const { convKey, seq, flags } of index.items) rows.push({ key: [inbox, TAG.item, convKey, seq], value: flags });
    for (const seq of index.deleted) rows.push({ key: [inbox, TAG.deleted, seq], value: true });
    for (const [seq, edit] of index.edits) rows.push({ key: [inbox, TAG.edit, seq], value: toJsonRow(edit) });
    return rows;
  }

  /** The conversation a row belongs to, if it names one (records, list order, items). */
  static convKeyOf(row: IndexRow): string | undefined {
    const [, tag, part] = row.key;
    if (tag === TAG.record || tag === TAG.item) return part as string;
    if (tag === TAG.order) return row.value as string;
    return undefined;
  }

  /** The entry seq a deleted or edit row is about. */
  static seqOf(row: IndexRow): number | undefined {
    const [, tag, part] = row.key;
    return tag === TAG.deleted || tag === TAG.edit ? (part as number) : undefined;
  }

  putRow(row: IndexRow): void {
    void this.db.put(row.key, row.value);
  }

  removeRow(row: IndexRow): void {
    void this.db.remove(row.key);
  }
}

/** One stored row of an inbox's index. */
export interface IndexRow {
  key: [inbox: string, tag: string, ...parts: Array<string | number>];
  value: RowValue;
}

/** A whole index of one inbox, in the shape it is stored (items with their flags). */
export interface IndexContent {
  records: ReadonlyMap<string, ConvRecord>;
  items: ReadonlyArray<{ convKey: string; seq: number; flags: number }>;
  deleted: Iterable<number>;
  edits: ReadonlyMap<number, EditRef>;
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
