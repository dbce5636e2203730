/**
 * The admin rebuild of one inbox's conversation index on CQL (core's ConversationRebuilder,
 * run by the inbox's writer through CqlConversationIndexWriter.rebuild, serialised with its index
 * writes), in bounded pages: it holds the inbox's conversations and the messages its control
 * entries hit (core's InboxRecount), never its entries nor its index rows by message.
 *
 * 1. First pass: the inbox a page (REBUILD_PAGE entries) at a time, each page folded into the
 *    recount's cursors with the entries it names below itself (point reads).
 * 2. The stored index read a page at a time and summed up for the comparison with the recount
 *    (conversation-rebuild-compare.ts).
 * 3. The clear: the sentinel and the partition deletes, one mutation.
 * 4. Second pass: the same pages up to the first pass's head; each page's unread and visible
 *    items are written as they come (WRITE_CHUNK rows a write), then the records, list rows,
 *    deleted and edit rows.
 * 5. The finish: the watermark (= the head) with the sentinel cleared.
 *
 * All or nothing (docs/decisions.md, "Rebuild is all or nothing"): the recount is too big for
 * one mutation, so a rebuild cut off anywhere between its first write (3) and its last (5)
 * leaves the sentinel: readers get headSeq 0 (the rows are exact at no seq), and the writer's
 * next catch-up — the next append, a takeover — redoes the whole rebuild instead of counting on
 * top of the half-written rows (CqlConversationIndexWriter.remembered).
 *
 * Tombstone ordering (core's rebuildWriteTimestamps): the partition deletes carry a timestamp
 * above every stored row — every index write up to the head, a deposed writer's late one, an
 * earlier rebuild's rows — the recount's rows the next one, the watermark the one after; all stay
 * below the timestamp of the next seq's index write. So Cassandra keeps the new rows whatever
 * order the requests land in, and the next append's rows are never hidden. No row is written
 * twice, so one timestamp serves them all. Each write is fenced by the guard, like the index's
 * own writes, and no write of a failed rebuild is still on the wire when it rejects (mapLimit).
 *
 * An index that has an expiry horizon (conversation-expiry.ts: entries expired and the owner
 * moved it) is rebuilt at the horizon of the entries left — the oldest one's seq — with the
 * recount's records kept there (core's keptRecord), and that horizon is stored with the
 * watermark. Visible, deleted and edit rows below it are not compared: they name entries that
 * are gone, nothing reads them, and their TTLs drop them. An index without one is rebuilt as the
 * plain recount.
 */
import {
  answersFor,
  conversationKey,
  InboxRecount,
  keptRecord,
  rebuildWriteTimestamps,
  splitKey,
  type ConversationRebuildReport,
  type DedupKey,
  type Entry,
  type InboxKey,
  type Logger,
  type RecountFound,
  type RecountItems,
  type RecountTargets,
  type WriteGuard,
} from '@seqline/core';
import { chunks, mapLimit, type Cql, type Statement } from './cql.ts';
import { oldestWrittenAfter } from './conversation-expiry.ts';
import type { InboxEntrySource } from './conversation-facts-reader.ts';
import { StoredIndexComparison } from './conversation-rebuild-compare.ts';
import {
  atTimestamp,
  expiryCellParams,
  readWatermark,
  readWatermarkStamps,
  recordParams,
  type ConversationStatements,
  type ExpiryCells,
} from './conversation-tables.ts';

/** Entries per read of the inbox (each pass), and rows per page of a read of the stored index. */
export const REBUILD_PAGE = 500;
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
  /** Entries per read of the inbox and rows per page of a stored-index read; default REBUILD_PAGE. */
  pageSize?: number | undefined;
}

/** One rebuild: the inbox, and the guard that fences each of its writes. */
export interface RebuildInput {
  inbox: InboxKey;
  guard?: WriteGuard | undefined;
}

/** What the first pass saw of the inbox: the second one stops at the same head. */
interface InboxScan {
  entries: number;
  headSeq: number;
  oldest: Entry | undefined;
}

export async function rebuildInboxIndex(deps: RebuildDeps, { inbox, guard }: RebuildInput): Promise<ConversationRebuildReport> {
  const { cql, q } = deps;
  const pageSize = deps.pageSize ?? REBUILD_PAGE;
  const recount = new InboxRecount(splitKey(inbox).id);
  const scan = await foldCursors(deps.source, inbox, recount, pageSize);
  const [mark, { horizon: storedHorizon }] = await Promise.all([readWatermarkStamps(cql, q, inbox), readWatermark(cql, q, inbox)]);
  // What is left of an inbox whose entries expired starts at its oldest entry.
  const horizon = (deps.retentionSeconds ?? 0) > 0 && storedHorizon > 0 ? Math.max(storedHorizon, scan.oldest?.seq ?? 0) : undefined;
  const { deleted, edits } = recount.counted();
  const stored = await StoredIndexComparison.read(cql, q, { inbox, pageRows: pageSize, horizon, mark, deleted, edits });

  const at = rebuildWriteTimestamps({ headSeq: scan.headSeq, stored: mark });
  const write = (timestamp: bigint) => async (statements: Statement[]) => {
    guard?.();
    await cql.batch(atTimestamp(statements, timestamp), true);
  };
  await write(at.clear)([{ query: q.markRebuilding, params: [inbox] }, ...q.dropRows.map((query) => ({ query, params: [inbox] }))]);
  const rows = new ChunkedWrites(write(at.rows));
  await eachPageUpTo(deps.source, inbox, scan.headSeq, pageSize, async (page) => {
    const items = recount.countItems(page);
    stored.subtract(items);
    await rows.add(itemStatements(deps.q, inbox, items));
  });
  const { records } = recount.counted();
  if (horizon !== undefined) for (const [key, rec] of records) records.set(key, keptRecord(rec, horizon));
  const rest: Statement[] = [];
  for (const rec of records.values()) {
    const params = recordParams(inbox, rec);
    rest.push({ query: q.insertRecord, params }, { query: q.insertListRow, params });
  }
  for (const seq of deleted) rest.push({ query: q.insertDeleted, params: [inbox, seq] });
  for (const [seq, edit] of edits) rest.push({ query: q.insertEdit, params: [inbox, seq, JSON.stringify(edit)] });
  await rows.add(rest);
  await rows.flush();
  await write(at.finish)([
    { query: q.finishRebuild, params: [inbox, scan.headSeq, ...expiryCellParams(expiryCells(deps, scan, horizon))] },
  ]);

  const changed = await stored.result(records, scan.headSeq, (seqs) => convsAt(deps.source, inbox, seqs));
  const report: ConversationRebuildReport = {
    differed: changed.differed,
    changedConversations: [...changed.keys].sort(),
    conversations: records.size,
    entries: scan.entries,
    headSeq: scan.headSeq,
  };
  deps.logger.info({ inbox, ...report, changedConversations: report.changedConversations.length }, 'conversation index rebuilt');
  return report;
}

/** First pass: every page folded into the recount's cursors, with the entries it names below itself. */
async function foldCursors(source: InboxEntrySource, inbox: InboxKey, recount: InboxRecount, pageSize: number): Promise<InboxScan> {
  const scan: InboxScan = { entries: 0, headSeq: 0, oldest: undefined };
  for (;;) {
    const page = await source.readAfter({ inbox, afterSeq: scan.headSeq, limit: pageSize });
    if (page.length > 0) {
      recount.foldCursors(page, await readTargets(source, inbox, recount.targetsOf(page)));
      scan.oldest ??= page[0];
      scan.entries += page.length;
      scan.headSeq = (page.at(-1) as Entry).seq;
    }
    if (page.length < pageSize) return scan;
  }
}

/** The entries a page names below itself: by seq, and by dedup key (the lowest live seq, as the index's facts). */
async function readTargets(source: InboxEntrySource, inbox: InboxKey, { seqs, keys }: RecountTargets): Promise<RecountFound> {
  const [bySeq, keySeqs] = await Promise.all([
    seqs.length === 0 ? new Map<number, Entry>() : source.entriesAt(inbox, seqs),
    keys.length === 0 ? new Map<DedupKey, number>() : source.findSeqs({ inbox, keys }),
  ]);
  const keyed = keySeqs.size === 0 ? new Map<number, Entry>() : await source.entriesAt(inbox, [...keySeqs.values()]);
  const byKey = new Map<DedupKey, Entry>();
  for (const [key, seq] of keySeqs) {
    const entry = keyed.get(seq);
    if (entry !== undefined && answersFor(entry, key)) byKey.set(key, entry);
  }
  return { bySeq, byKey };
}

/** Second pass: the inbox again, a page at a time, up to the first pass's head. */
async function eachPageUpTo(
  source: InboxEntrySource,
  inbox: InboxKey,
  headSeq: number,
  pageSize: number,
  visit: (page: Entry[]) => Promise<void>,
): Promise<void> {
  for (let after = 0; after < headSeq;) {
    const page = (await source.readAfter({ inbox, afterSeq: after, limit: pageSize })).filter((entry) => entry.seq <= headSeq);
    if (page.length === 0) return;
    await visit(page);
    after = (page.at(-1) as Entry).seq;
  }
}

function itemStatements(q: ConversationStatements, inbox: InboxKey, items: RecountItems): Statement[] {
  const out: Statement[] = items.unread.map((item) => ({ query: q.insertUnread, params: [inbox, item.convKey, item.seq, item.mention] }));
  for (const item of items.visible) {
    const at = item.lastIndexOf('|');
    out.push({ query: q.insertVisible, params: [inbox, item.slice(0, at), Number(item.slice(at + 1))] });
  }
  return out;
}

/**
 * Rows written WRITE_CHUNK at a time, at most WRITES_IN_FLIGHT at once, as they come: at most a
 * chunk is held between two adds. No write is still on the wire when a call rejects (mapLimit).
 */
class ChunkedWrites {
  private pending: Statement[] = [];

  constructor(private readonly write: (statements: Statement[]) => Promise<void>) {}

  async add(statements: readonly Statement[]): Promise<void> {
    this.pending.push(...statements);
    if (this.pending.length < WRITE_CHUNK) return;
    const full = this.pending.length - (this.pending.length % WRITE_CHUNK);
    const due = this.pending.slice(0, full);
    this.pending = this.pending.slice(full);
    await mapLimit(chunks(due, WRITE_CHUNK), WRITES_IN_FLIGHT, this.write);
  }

  async flush(): Promise<void> {
    const due = this.pending;
    this.pending = [];
    await mapLimit(chunks(due, WRITE_CHUNK), WRITES_IN_FLIGHT, this.write);
  }
}

/** Without a retention, no expiry cell; without a horizon, none is set (the index counts from the oldest entry). */
function expiryCells({ retentionSeconds = 0 }: RebuildDeps, { oldest }: InboxScan, horizon: number | undefined): ExpiryCells {
  if (retentionSeconds <= 0 || oldest === undefined) return {};
  return {
    ...(horizon !== undefined && { horizon }),
    oldestAt: oldestWrittenAfter(oldest, Date.now(), retentionSeconds),
    firstSeq: oldest.seq,
  };
}

/** The conversations of the entries at `seqs` (an entry that is gone names none). */
async function convsAt(source: InboxEntrySource, inbox: InboxKey, seqs: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const part of chunks(seqs, REBUILD_PAGE)) {
    for (const [seq, entry] of await source.entriesAt(inbox, part)) out.set(seq, conversationKey(entry.conv));
  }
  return out;
}
