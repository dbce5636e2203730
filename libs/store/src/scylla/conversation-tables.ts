/**
 * The conversation index's CQL layout (schema/002_conversations.cql): its statements, the
 * record ⇄ row codec (conversation-row-codec.ts, re-exported here), and one entry's
 * ConversationChanges as the statements of one batch. Every table is partitioned by inbox
 * alone, so that batch is a single mutation (all-or-nothing).
 *
 * Every write names its own timestamp (`USING TIMESTAMP ?`, bound by atTimestamp), taken from
 * the seq the write leaves the index exact at (core's seqWriteTimestamp), never from a clock:
 * rows are overwritten by every message, and a writer's clock that jumps must not make its rows
 * outlive a later write or lose to an earlier one (docs/decisions.md, "Write timestamps follow
 * seqs, not clocks"). A statement without its timestamp bound fails (too few values).
 *
 * With a retention (the timeline's TTL), rows also carry TTLs (conversationTtls): Cassandra counts
 * a TTL from its own clock, whatever timestamp a write names.
 */
import { conversationKey, seqWriteTimestamp, type ConversationChanges, type StoredWatermarkStamps } from '@seqline/core';
import { types } from 'cassandra-driver';
import { recordParams } from './conversation-row-codec.ts';
import { optBigint, optNum, timestampParam, type Cql, type Statement } from './cql.ts';

export { assertIndexable, parseEdit, recordParams, rowToRecord } from './conversation-row-codec.ts';

/**
 * The record columns after the key, in insert order (conv_records and conv_list share them).
 * title and title_rev: schema/006_conversation_titles.cql.
 */
const RECORD_COLUMNS = [
  'conv_type',
  'conv_id',
  'last_msg_seq',
  'read_seq',
  'cleared_seq',
  'unread',
  'mentions',
  'as_of_seq',
  'title',
  'title_rev',
] as const;
const RECORD_SELECT = `conv_key, last_seq, ${RECORD_COLUMNS.join(', ')}`;

export type ConversationStatements = ReturnType<typeof conversationStatements>;

/**
 * The TTLs of the index rows, in seconds (0: none), for entries kept `retentionSeconds` (0:
 * forever). Visible, deleted and edit rows name one entry each and are written after it: they
 * live as long as entries do, and nothing reads them below the horizon (conversation-expiry.ts).
 * Records, list rows, unread rows and the watermark are moved by the owner at each horizon
 * (their counts must drop exactly when their messages expire): they live twice as long, so
 * that rows of entries expired since the last move are still there to be counted at the next
 * (an index left alone longer than the retention is rebuilt instead).
 */
export function conversationTtls(retentionSeconds: number): { items: number; state: number } {
  return { items: retentionSeconds, state: 2 * retentionSeconds };
}

export function conversationStatements(cql: Cql, retentionSeconds = 0) {
  const records = cql.table('conv_records');
  const list = cql.table('conv_list');
  const unread = cql.table('conv_unread');
  const visible = cql.table('conv_visible');
  const deleted = cql.table('conv_deleted');
  const edits = cql.table('conv_edits');
  const watermark = cql.table('conv_watermark');
  const marks = RECORD_COLUMNS.map(() => '?').join(', ');
  const at = 'USING TIMESTAMP ?';
  const ttls = conversationTtls(retentionSeconds);
  // An INSERT or UPDATE also names its TTL (a literal: one per table); a DELETE has none.
  const itemAt = `USING TTL ${ttls.items} AND TIMESTAMP ?`;
  const stateAt = `USING TTL ${ttls.state} AND TIMESTAMP ?`;
  const horizon = 'horizon, oldest_at, first_seq, WRITETIME(horizon) AS horizon_written_at';
  // The watermark's expiry cells (schema/008_conversation_expiry.cql), unset where unchanged.
  const expiryCells = 'horizon, oldest_at, first_seq';
  return {
    // Reads
    recordsIn: `SELECT ${RECORD_SELECT} FROM ${records} WHERE inbox = ? AND conv_key IN ?`,
    record: `SELECT ${RECORD_SELECT} FROM ${records} WHERE inbox = ? AND conv_key = ?`,
    listFirst: `SELECT ${RECORD_SELECT} FROM ${list} WHERE inbox = ? LIMIT ?`,
    listBefore: `SELECT ${RECORD_SELECT} FROM ${list} WHERE inbox = ? AND last_seq < ? LIMIT ?`,
    unreadUpTo: `SELECT seq, mention FROM ${unread} WHERE inbox = ? AND conv_key = ? AND seq <= ?`,
    unreadAt: `SELECT seq, mention FROM ${unread} WHERE inbox = ? AND conv_key = ? AND seq IN ?`,
    visibleNewest: `SELECT seq FROM ${visible} WHERE inbox = ? AND conv_key = ? LIMIT ?`,
    visibleBefore: `SELECT seq FROM ${visible} WHERE inbox = ? AND conv_key = ? AND seq < ? LIMIT ?`,
    deletedIn: `SELECT seq FROM ${deleted} WHERE inbox = ? AND seq IN ?`,
    editsIn: `SELECT seq, edit FROM ${edits} WHERE inbox = ? AND seq IN ?`,
    watermark: `SELECT seq, rebuilding, ${horizon} FROM ${watermark} WHERE inbox = ?`,
    watermarkStamps: `SELECT seq, rebuilding, WRITETIME(seq) AS seq_at, WRITETIME(rebuilding) AS rebuilding_at FROM ${watermark} WHERE inbox = ?`,
    // Whole-inbox reads, partition deletes and the sentinel (the admin rebuild, conversation-rebuild.ts)
    allRecords: `SELECT ${RECORD_SELECT} FROM ${records} WHERE inbox = ?`,
    allListRows: `SELECT ${RECORD_SELECT} FROM ${list} WHERE inbox = ?`,
    allUnread: `SELECT conv_key, seq, mention FROM ${unread} WHERE inbox = ?`,
    allVisible: `SELECT conv_key, seq FROM ${visible} WHERE inbox = ?`,
    allDeleted: `SELECT seq FROM ${deleted} WHERE inbox = ?`,
    allEdits: `SELECT seq, edit FROM ${edits} WHERE inbox = ?`,
    dropRows: [records, list, unread, visible, deleted, edits].map((table) => `DELETE FROM ${table} ${at} WHERE inbox = ?`),
    markRebuilding: `UPDATE ${watermark} ${stateAt} SET rebuilding = true WHERE inbox = ?`,
    // Also with seq 0 (an inbox whose entries all expired): the row keeps the rebuild's WRITETIME.
    finishRebuild: `INSERT INTO ${watermark} (inbox, seq, rebuilding, ${expiryCells}) VALUES (?, ?, false, ?, ?, ?) ${stateAt}`,
    // Expiry (conversation-expiry.ts)
    deleteRecord: `DELETE FROM ${records} ${at} WHERE inbox = ? AND conv_key = ?`,
    // Writes (the owner's, one batch per entry)
    insertRecord: `INSERT INTO ${records} (inbox, conv_key, last_seq, ${RECORD_COLUMNS.join(', ')}) VALUES (?, ?, ?, ${marks}) ${stateAt}`,
    insertListRow: `INSERT INTO ${list} (inbox, conv_key, last_seq, ${RECORD_COLUMNS.join(', ')}) VALUES (?, ?, ?, ${marks}) ${stateAt}`,
    deleteListRow: `DELETE FROM ${list} ${at} WHERE inbox = ? AND last_seq = ?`,
    insertUnread: `INSERT INTO ${unread} (inbox, conv_key, seq, mention) VALUES (?, ?, ?, ?) ${stateAt}`,
    deleteUnread: `DELETE FROM ${unread} ${at} WHERE inbox = ? AND conv_key = ? AND seq = ?`,
    deleteUnreadUpTo: `DELETE FROM ${unread} ${at} WHERE inbox = ? AND conv_key = ? AND seq <= ?`,
    insertVisible: `INSERT INTO ${visible} (inbox, conv_key, seq) VALUES (?, ?, ?) ${itemAt}`,
    deleteVisible: `DELETE FROM ${visible} ${at} WHERE inbox = ? AND conv_key = ? AND seq = ?`,
    insertDeleted: `INSERT INTO ${deleted} (inbox, seq) VALUES (?, ?) ${itemAt}`,
    insertEdit: `INSERT INTO ${edits} (inbox, seq, edit) VALUES (?, ?, ?) ${itemAt}`,
    setWatermark: `INSERT INTO ${watermark} (inbox, seq, ${expiryCells}) VALUES (?, ?, ?, ?, ?) ${stateAt}`,
  };
}

/**
 * The statements with their write timestamp bound: an INSERT names it last (`USING` follows
 * `VALUES`), an UPDATE or DELETE first (`USING` precedes `SET` / `WHERE`).
 */
export function atTimestamp(statements: readonly Statement[], timestamp: bigint): Statement[] {
  const at = timestampParam(timestamp);
  return statements.map(({ query, params }) => ({ query, params: query.startsWith('INSERT') ? [...params, at] : [at, ...params] }));
}

/** The stored watermark: the seq the index is exact at, unless a rebuild is under way or was cut off. */
export interface StoredWatermark {
  /** 0 when nothing is indexed. */
  seq: number;
  /** A rebuild set its sentinel and has not written its watermark: the rows are exact at no seq. */
  rebuilding: boolean;
  /** The expiry horizon the records are kept at (conversation-expiry.ts); 0 until entries expired. */
  horizon: number;
  /** When the owner last found the index at its horizon (ms, its clock). */
  oldestAt: number | undefined;
  /** The oldest seq the index counted; unknown in rows written before schema version 8. */
  firstSeq: number | undefined;
  /** WRITETIME of the horizon: one move per watermark (core's expiryWriteTimestamp). */
  horizonWrittenAt: bigint | undefined;
}

/** The watermark row's expiry cells an index write sets; absent ones are left as they are. */
export interface ExpiryCells {
  horizon?: number;
  oldestAt?: number;
  firstSeq?: number;
}

/** The bind values of ExpiryCells (horizon, oldest_at, first_seq): unset writes no cell. */
export function expiryCellParams(cells: ExpiryCells = {}): unknown[] {
  return [cells.horizon ?? types.unset, cells.oldestAt ?? types.unset, cells.firstSeq ?? types.unset];
}

export async function readWatermark(cql: Cql, q: ConversationStatements, inbox: string): Promise<StoredWatermark> {
  const row = (await cql.read(q.watermark, [inbox])).first();
  if (row === null) return { seq: 0, rebuilding: false, horizon: 0, oldestAt: undefined, firstSeq: undefined, horizonWrittenAt: undefined };
  // A sentinel set on an inbox that had no watermark makes a row without seq.
  return {
    seq: optNum(row.get('seq')) ?? 0,
    rebuilding: row.get('rebuilding') === true,
    horizon: optNum(row.get('horizon')) ?? 0,
    oldestAt: optNum(row.get('oldest_at')),
    firstSeq: optNum(row.get('first_seq')),
    horizonWrittenAt: optBigint(row.get('horizon_written_at')),
  };
}

/** The stored watermark with the WRITETIMEs a rebuild clears above (core's rebuildWriteTimestamps). */
export async function readWatermarkStamps(cql: Cql, q: ConversationStatements, inbox: string): Promise<StoredWatermarkStamps> {
  const row = (await cql.read(q.watermarkStamps, [inbox])).first();
  if (row === null) return { seq: 0, rebuilding: false };
  return {
    seq: optNum(row.get('seq')) ?? 0,
    rebuilding: row.get('rebuilding') === true,
    seqWrittenAt: optBigint(row.get('seq_at')),
    sentinelWrittenAt: optBigint(row.get('rebuilding_at')),
  };
}

/**
 * The statements persisting one entry's changes and the watermark `seq` (ONE batch), all at the
 * timestamp of the seq they leave the index exact at: a write of a later watermark always wins,
 * whichever writer made it and whenever it lands. Unread
 * rows a read or clear removes are one range delete per conversation instead of a row each (a
 * never-read group can hold 100 000): after the entry no unread item is left at or below the
 * record's max(readSeq, clearedSeq), so deleting that whole range is exact.
 */
export function changeStatements(
  q: ConversationStatements,
  inbox: string,
  changes: ConversationChanges,
  watermark: number,
  /** Expiry cells that ride with the watermark (conversation-expiry.ts). */
  cells?: ExpiryCells,
): Statement[] {
  const out: Statement[] = [];
  const rangeDeleted = new Map<string, number>();
  for (const { before, after } of changes.records) {
    const key = conversationKey(after.conv);
    const params = recordParams(inbox, after);
    out.push({ query: q.insertRecord, params }, { query: q.insertListRow, params });
    if (before !== null && before.lastSeq !== after.lastSeq) out.push({ query: q.deleteListRow, params: [inbox, before.lastSeq] });
    const bound = Math.max(after.readSeq, after.clearedSeq);
    if (before !== null && bound > Math.max(before.readSeq, before.clearedSeq)) rangeDeleted.set(key, bound);
  }
  const ranged = new Set<string>();
  for (const item of changes.unreadRemove) {
    const bound = rangeDeleted.get(item.convKey);
    if (bound === undefined || item.seq > bound) {
      out.push({ query: q.deleteUnread, params: [inbox, item.convKey, item.seq] });
    } else if (!ranged.has(item.convKey)) {
      ranged.add(item.convKey);
      out.push({ query: q.deleteUnreadUpTo, params: [inbox, item.convKey, bound] });
    }
  }
  for (const item of changes.unreadAdd) out.push({ query: q.insertUnread, params: [inbox, item.convKey, item.seq, item.mention] });
  for (const item of changes.visibleRemove) out.push({ query: q.deleteVisible, params: [inbox, item.convKey, item.seq] });
  for (const item of changes.visibleAdd) out.push({ query: q.insertVisible, params: [inbox, item.convKey, item.seq] });
  for (const seq of changes.deleted) out.push({ query: q.insertDeleted, params: [inbox, seq] });
  for (const { seq, edit } of changes.edits) out.push({ query: q.insertEdit, params: [inbox, seq, JSON.stringify(edit)] });
  out.push({ query: q.setWatermark, params: [inbox, watermark, ...expiryCellParams(cells)] });
  return atTimestamp(out, seqWriteTimestamp(watermark));
}
