/**
 * The admin rebuild of one inbox's conversation index on CQL (core's ConversationRebuilder,
 * run by the inbox's writer through ConversationIndexWriter.rebuild, serialised with its index
 * writes): the whole inbox is read and recounted with core's recountInboxIndex, the stored rows
 * of every conv_* table are compared with the recount, then the rows are replaced.
 *
 * All or nothing (docs/decisions.md, "Rebuild is all or nothing"): the recount is too big for
 * one mutation, so the first write sets a sentinel (conv_watermark.rebuilding) in the same
 * mutation as the partition deletes, the recount follows in chunks, and the last write sets the
 * watermark (= the head) and clears the sentinel together. A rebuild cut off anywhere between
 * leaves the sentinel: readers get headSeq 0 (the rows are exact at no seq), and the writer's
 * next catch-up — the next append, a takeover — redoes the whole rebuild instead of counting on
 * top of the half-written rows (ConversationIndexWriter.remembered).
 *
 * Tombstone ordering: the partition deletes carry timestamp T and every row written after them
 * a later one (writeTimestamp is strictly increasing), so Cassandra keeps the new rows whatever
 * order the requests land in. Each write is fenced by the guard, like the index's own writes,
 * and no write of a failed rebuild is still on the wire when it rejects (mapLimit).
 */
import { isDeepStrictEqual } from 'node:util';
import {
  conversationItemKey,
  conversationKey,
  recountInboxIndex,
  splitKey,
  type ConversationRebuildReport,
  type ConvRecord,
  type EditRef,
  type Entry,
  type InboxIndexState,
  type InboxKey,
  type Logger,
  type WriteGuard,
} from '@seqline/core';
import { chunks, mapLimit, num, str, writeTimestamp, type Cql, type Statement } from './cql.ts';
import type { InboxEntrySource } from './conversation-facts.ts';
import { parseEdit, readWatermark, recordParams, rowToRecord, type ConversationStatements } from './conversation-tables.ts';

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
}

export async function rebuildInboxIndex(deps: RebuildDeps, inbox: InboxKey, guard?: WriteGuard): Promise<ConversationRebuildReport> {
  const entries = await readWholeInbox(deps.source, inbox);
  const headSeq = entries.at(-1)?.seq ?? 0;
  const recount = recountInboxIndex(entries, splitKey(inbox).id);
  const stored = await readStoredIndex(deps, inbox);
  const changed = differences(stored, recount, headSeq, entries);
  await replaceIndex(deps, inbox, recount, headSeq, guard);
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
  const [records, list, unread, visible, deleted, edits, mark] = await Promise.all([
    cql.readAll(q.allRecords, [inbox]),
    cql.readAll(q.allListRows, [inbox]),
    cql.readAll(q.allUnread, [inbox]),
    cql.readAll(q.allVisible, [inbox]),
    cql.readAll(q.allDeleted, [inbox]),
    cql.readAll(q.allEdits, [inbox]),
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
 * Sentinel and partition deletes at T (one mutation), then the recount's rows after T, the
 * watermark and the sentinel's end last (one mutation).
 */
async function replaceIndex(
  { cql, q }: RebuildDeps,
  inbox: InboxKey,
  recount: InboxIndexState,
  headSeq: number,
  guard?: WriteGuard,
): Promise<void> {
  const write = async (statements: Statement[]) => {
    guard?.();
    await cql.batch(statements, true, writeTimestamp());
  };
  await write([{ query: q.markRebuilding, params: [inbox] }, ...q.dropRows.map((query) => ({ query, params: [inbox] }))]);
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
  await mapLimit(chunks(rows, WRITE_CHUNK), WRITES_IN_FLIGHT, write);
  await write([headSeq > 0 ? { query: q.finishRebuild, params: [inbox, headSeq] } : { query: q.dropWatermark, params: [inbox] }]);
}
