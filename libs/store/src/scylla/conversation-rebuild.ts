/**
 * The admin rebuild of one inbox's conversation index on CQL (core's ConversationRebuilder,
 * run by the inbox's writer through CqlConversationIndexWriter.rebuild, serialised with its index
 * writes): the whole inbox is read and recounted with core's recountInboxIndex, the stored rows
 * of every conv_* table are compared with the recount, then the rows are replaced.
 *
 * All or nothing (docs/decisions.md, "Rebuild is all or nothing"): the recount is too big for
 * one mutation, so the first write sets a sentinel (conv_watermark.rebuilding) in the same
 * mutation as the partition deletes, the recount follows in chunks, and the last write sets the
 * watermark (= the head) and clears the sentinel together. A rebuild cut off anywhere between
 * leaves the sentinel: readers get headSeq 0 (the rows are exact at no seq), and the writer's
 * next catch-up — the next append, a takeover — redoes the whole rebuild instead of counting on
 * top of the half-written rows (CqlConversationIndexWriter.remembered).
 *
 * Tombstone ordering (core's rebuildWriteTimestamps): the partition deletes carry a timestamp
 * above every stored row — every index write up to the head, a deposed writer's late one, an
 * earlier rebuild's rows — the recount's rows the next one, the watermark the one after; all stay
 * below the timestamp of the next seq's index write. So Cassandra keeps the new rows whatever
 * order the requests land in, and the next append's rows are never hidden. Each write is fenced
 * by the guard, like the index's own writes, and no write of a failed rebuild is still on the
 * wire when it rejects (mapLimit).
 *
 * An index that has an expiry horizon (conversation-expiry.ts: entries expired and the owner
 * moved it) is rebuilt at the horizon of the entries left — the oldest one's seq — with the
 * recount's records kept there (core's keptRecord), and that horizon is stored with the
 * watermark. Visible, deleted and edit rows below it are not compared: they name entries that
 * are gone, nothing reads them, and their TTLs drop them. An index without one is rebuilt as the
 * plain recount.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  conversationItemKey,
  conversationKey,
  keptRecord,
  rebuildWriteTimestamps,
  recountInboxIndex,
  splitKey,
  type ConversationRebuildReport,
  type ConvRecord,
  type EditRef,
  type Entry,
  type InboxIndexState,
  type InboxKey,
  type Logger,
  type StoredWatermarkStamps,
  type WriteGuard,
} from '@seqline/core';
import { chunks, mapLimit, num, str, type Cql, type Statement } from './cql.ts';
import { oldestWrittenAfter } from './conversation-expiry.ts';
import type { InboxEntrySource } from './conversation-facts-reader.ts';
import {
  atTimestamp,
  expiryCellParams,
  parseEdit,
  readWatermark,
  readWatermarkStamps,
  recordParams,
  rowToRecord,
  type ConversationStatements,
  type ExpiryCells,
} from './conversation-tables.ts';

/** Entries read per page. */
const READ_PAGE = 1000;
/** Rows per write (one partition: one mutation each). */
const WRITE_CHUNK = 500;
const WRITES_IN_FLIGHT = 4;

export interface RebuildDeps {
  cql: Cql;
  q: ConversationStatements;
  source: InboxEntrySource;
  logger: Logger;
  /** The timeline's TTL in seconds (0 or absent: entries never expire). */
  retentionSeconds?: number;
}

/** The index rows as stored, keyed as the recount keys them. */
interface StoredIndex {
  records: Map<string, ConvRecord>;
  /** last_seq → the record copy of that list row. */
  list: Map<number, ConvRecord>;
  /** conversationItemKey → mention. */
  unread: Map<string, boolean>;
  visible: Set<string>;
  deleted: Set<number>;
  edits: Map<number, EditRef>;
  watermark: number | undefined;
  /** The watermark row with its WRITETIMEs: the rebuild's timestamps go above them. */
  stamps: StoredWatermarkStamps;
  /** The stored expiry horizon (0: none). */
  horizon: number;
}

/** Leaves out the visible, deleted and edit rows below the horizon: they name entries that are gone. */
function keepAbove(stored: StoredIndex, horizon: number): void {
  const seqOf = (item: string) => Number(item.slice(item.lastIndexOf('|') + 1));
  for (const item of stored.visible) if (seqOf(item) < horizon) stored.visible.delete(item);
  for (const seq of stored.deleted) if (seq < horizon) stored.deleted.delete(seq);
  for (const seq of stored.edits.keys()) if (seq < horizon) stored.edits.delete(seq);
}

export async function rebuildInboxIndex(deps: RebuildDeps, inbox: InboxKey, guard?: WriteGuard): Promise<ConversationRebuildReport> {
  const entries = await readWholeInbox(deps.source, inbox);
  const headSeq = entries.at(-1)?.seq ?? 0;
  const recount = recountInboxIndex(entries, splitKey(inbox).id);
  const stored = await readStoredIndex(deps, inbox);
  // What is left of an inbox whose entries expired starts at its oldest entry.
  const horizon = (deps.retentionSeconds ?? 0) > 0 && stored.horizon > 0 ? Math.max(stored.horizon, entries[0]?.seq ?? 0) : undefined;
  if (horizon !== undefined) {
    for (const [key, rec] of recount.records) recount.records.set(key, keptRecord(rec, horizon));
    keepAbove(stored, horizon);
  }
  const changed = differences(stored, recount, headSeq, entries);
  await replaceIndex(deps, inbox, { recount, headSeq, horizon, oldest: entries[0] }, stored.stamps, guard);
  const report: ConversationRebuildReport = {
    differed: changed.differed,
    changedConversations: [...changed.keys].sort(),
    conversations: recount.records.size,
    entries: entries.length,
    headSeq,
  };
  deps.logger.info({ inbox, ...report, changedConversations: report.changedConversations.length }, 'conversation index rebuilt');
  return report;
}

async function readWholeInbox(source: InboxEntrySource, inbox: InboxKey): Promise<Entry[]> {
  const out: Entry[] = [];
  for (;;) {
    const page = await source.readAfter(inbox, out.at(-1)?.seq ?? 0, READ_PAGE);
    out.push(...page);
    if (page.length < READ_PAGE) return out;
  }
}

async function readStoredIndex({ cql, q }: RebuildDeps, inbox: InboxKey): Promise<StoredIndex> {
  const [records, list, unread, visible, deleted, edits, mark, { horizon }] = await Promise.all([
    cql.readAll(q.allRecords, [inbox]),
    cql.readAll(q.allListRows, [inbox]),
    cql.readAll(q.allUnread, [inbox]),
    cql.readAll(q.allVisible, [inbox]),
    cql.readAll(q.allDeleted, [inbox]),
    cql.readAll(q.allEdits, [inbox]),
    readWatermarkStamps(cql, q, inbox),
    readWatermark(cql, q, inbox),
  ]);
  const itemKey = (row: (typeof unread)[number]) => conversationItemKey(str(row.get('conv_key'), 'conv_key'), num(row.get('seq')));
  return {
    records: new Map(records.map((row) => [str(row.get('conv_key'), 'conv_key'), rowToRecord(row)])),
    list: new Map(list.map((row) => [num(row.get('last_seq')), rowToRecord(row)])),
    unread: new Map(unread.map((row) => [itemKey(row), row.get('mention') === true])),
    visible: new Set(visible.map(itemKey)),
    deleted: new Set(deleted.map((row) => num(row.get('seq')))),
    edits: new Map(edits.map((row) => [num(row.get('seq')), parseEdit(String(row.get('edit')), num(row.get('seq')))])),
    // A sentinel left by a rebuild that was cut off: the rows are exact at no seq.
    watermark: mark.rebuilding || mark.seq === 0 ? undefined : mark.seq,
    stamps: mark,
    horizon,
  };
}

/** Which conversations' records or rows differ from the recount, and whether anything does (the watermark too). */
function differences(
  stored: StoredIndex,
  recount: InboxIndexState,
  headSeq: number,
  entries: readonly Entry[],
): { differed: boolean; keys: Set<string> } {
  const keys = new Set<string>();
  let differed = stored.watermark !== (headSeq === 0 ? undefined : headSeq);
  const convOfItem = (item: string) => item.slice(0, item.lastIndexOf('|'));
  const bySeq = new Map(entries.map((e) => [e.seq, e]));
  // A seq-keyed row names its entry's conversation; a row of an entry that is gone names none.
  const convOfSeq = (seq: number): string | undefined => {
    const entry = bySeq.get(seq);
    return entry === undefined ? undefined : conversationKey(entry.conv);
  };
  const mark = (key: string | undefined) => {
    differed = true;
    if (key !== undefined) keys.add(key);
  };
  for (const key of new Set([...stored.records.keys(), ...recount.records.keys()])) {
    if (!isDeepStrictEqual(stored.records.get(key), recount.records.get(key))) mark(key);
  }
  const expectedList = new Map([...recount.records.values()].map((rec) => [rec.lastSeq, rec]));
  for (const lastSeq of new Set([...stored.list.keys(), ...expectedList.keys()])) {
    const [have, want] = [stored.list.get(lastSeq), expectedList.get(lastSeq)];
    if (!isDeepStrictEqual(have, want)) for (const rec of [have, want]) mark(rec === undefined ? undefined : conversationKey(rec.conv));
  }
  for (const item of new Set([...stored.unread.keys(), ...recount.unread.keys()])) {
    if (stored.unread.get(item) !== recount.unread.get(item)?.mention) mark(convOfItem(item));
  }
  for (const item of new Set([...stored.visible, ...recount.visible])) {
    if (stored.visible.has(item) !== recount.visible.has(item)) mark(convOfItem(item));
  }
  for (const seq of new Set([...stored.deleted, ...recount.deleted])) {
    if (stored.deleted.has(seq) !== recount.deleted.has(seq)) mark(convOfSeq(seq));
  }
  for (const seq of new Set([...stored.edits.keys(), ...recount.edits.keys()])) {
    if (!isDeepStrictEqual(stored.edits.get(seq), recount.edits.get(seq))) mark(convOfSeq(seq));
  }
  return { differed, keys };
}

/**
 * Sentinel and partition deletes at `clear` (one mutation), then the recount's rows at `rows`,
 * the watermark and the sentinel's end last, at `finish` (one mutation).
 */
async function replaceIndex(
  { cql, q, retentionSeconds = 0 }: RebuildDeps,
  inbox: InboxKey,
  {
    recount,
    headSeq,
    horizon,
    oldest,
  }: { recount: InboxIndexState; headSeq: number; horizon: number | undefined; oldest: Entry | undefined },
  stored: StoredWatermarkStamps,
  guard?: WriteGuard,
): Promise<void> {
  const at = rebuildWriteTimestamps({ headSeq, stored });
  const write = (timestamp: bigint) => async (statements: Statement[]) => {
    guard?.();
    await cql.batch(atTimestamp(statements, timestamp), true);
  };
  await write(at.clear)([{ query: q.markRebuilding, params: [inbox] }, ...q.dropRows.map((query) => ({ query, params: [inbox] }))]);
  const rows: Statement[] = [];
  for (const rec of recount.records.values()) {
    const params = recordParams(inbox, rec);
    rows.push({ query: q.insertRecord, params }, { query: q.insertListRow, params });
  }
  for (const item of recount.unread.values()) rows.push({ query: q.insertUnread, params: [inbox, item.convKey, item.seq, item.mention] });
  for (const item of recount.visible) {
    const at = item.lastIndexOf('|');
    rows.push({ query: q.insertVisible, params: [inbox, item.slice(0, at), Number(item.slice(at + 1))] });
  }
  for (const seq of recount.deleted) rows.push({ query: q.insertDeleted, params: [inbox, seq] });
  for (const [seq, edit] of recount.edits) rows.push({ query: q.insertEdit, params: [inbox, seq, JSON.stringify(edit)] });
  await mapLimit(chunks(rows, WRITE_CHUNK), WRITES_IN_FLIGHT, write(at.rows));
  // Without a retention, no expiry cell; without a horizon, none is set (the index counts from the oldest entry).
  const cells: ExpiryCells =
    retentionSeconds > 0 && oldest !== undefined
      ? {
          ...(horizon !== undefined && { horizon }),
          oldestAt: oldestWrittenAfter(oldest, Date.now(), retentionSeconds),
          firstSeq: oldest.seq,
        }
      : {};
  await write(at.finish)([{ query: q.finishRebuild, params: [inbox, headSeq, ...expiryCellParams(cells)] }]);
}
