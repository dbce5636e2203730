/**
 * The LMDB tables of the conversation index (layout in keys.ts and docs/decisions.md) and the
 * reads both its writer (facts, inside the append's transaction) and its reader share. Every
 * key starts with the inbox, so one inbox's rows are one contiguous range per table.
 */
import type { Database, Key } from 'lmdb';
import { BadRequestError, hasLoneSurrogate, type ConvRecord, type EditRef, type Entry } from '@seqline/core';
import type { JsonRow } from './json-rows.ts';
import { DB_NAMES, MAX_KEY_NUMBER, MAX_KEY_PART_BYTES } from './keys.ts';
import type { AppinfoKey, SeqKey } from './seq-log.ts';

export type ConvKey = [inbox: string, convKey: string];
export type ConvItemKey = [inbox: string, convKey: string, seq: number];

export interface ConversationDbs {
  records: Database<ConvRecord, ConvKey>;
  /** The list: a conversation is at its lastSeq (distinct inbox seqs, so no two collide). */
  order: Database<string, SeqKey>;
  /** Counted messages; the value says whether it mentions the owner. */
  unread: Database<boolean, ConvItemKey>;
  visible: Database<true, ConvItemKey>;
  deleted: Database<true, SeqKey>;
  /** Client JSON (the edited body) as JSON text, like entries (json-rows.ts). */
  edits: Database<JsonRow<EditRef>, SeqKey>;
  watermark: Database<number, string>;
}

/** The inbox log the index is derived from (the timeline's SeqLog tables, read only here). */
export interface InboxLogDbs {
  entries: Database<JsonRow<Entry>, SeqKey>;
  appinfos: Database<number, AppinfoKey>;
}

export function openConversationDbs(db: <V, K extends Key>(name: string) => Database<V, K>): ConversationDbs {
  return {
    records: db(DB_NAMES.convRecords),
    order: db(DB_NAMES.convOrder),
    unread: db(DB_NAMES.convUnread),
    visible: db(DB_NAMES.convVisible),
    deleted: db(DB_NAMES.convDeleted),
    edits: db(DB_NAMES.convEdits),
    watermark: db(DB_NAMES.convWatermark),
  };
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

/** Unread rows of a conversation with seq <= upToSeq, oldest first. */
export function unreadRowsUpTo(
  dbs: ConversationDbs,
  inbox: string,
  convKey: string,
  upToSeq: number,
): Array<{ seq: number; mention: boolean }> {
  const range = dbs.unread.getRange({ start: [inbox, convKey, 0], end: [inbox, convKey, upToSeq], inclusiveEnd: true });
  return Array.from(range, ({ key, value }) => ({ seq: key[2], mention: value }));
}

/**
 * Visible seqs of a conversation below `beforeSeq` and above `aboveSeq`, newest first; the
 * iterator is lazy so a caller can stop at the first one it accepts.
 */
export function visibleSeqsDown(
  dbs: ConversationDbs,
  inbox: string,
  convKey: string,
  beforeSeq: number,
  aboveSeq: number,
): Iterable<number> {
  return dbs.visible
    .getKeys({ start: [inbox, convKey, beforeSeq], exclusiveStart: true, end: [inbox, convKey, aboveSeq], reverse: true })
    .map((key) => key[2]);
}

export const MAX_SEQ = MAX_KEY_NUMBER;
