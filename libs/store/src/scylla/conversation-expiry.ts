/**
 * The conversation index follows the timeline's retention (docs/decisions.md, "Conversation index
 * follows the timeline's retention"). Entries expire by the timeline's TTL, oldest first, so
 * what is left of an inbox is every entry at or above a horizon: the seq of its oldest entry
 * still stored. Before it indexes an append, the inbox's owner looks for a new horizon (at most
 * once per CHECK interval) and moves the index to it with core's expireConversations: records
 * whose activity all expired go with their list and unread rows, expired messages stop counting
 * as unread, cursors below the horizon are cleared — one write, one mutation, at core's
 * expiryWriteTimestamp (above the watermark's write, below the next seq's). The index then
 * equals a rebuild from the entries left. Records written afterwards are kept at the horizon too
 * (core's changesAtHorizon, in the writer).
 *
 * Rows carry TTLs as a backstop (conversationTtls): visible, deleted and edit rows as long as
 * entries (nothing asks about them below the horizon), the rest twice as long, so that the rows
 * a move must count are still there — unless the inbox went unappended for so long that they
 * may not be: then the index is rebuilt instead (expiryStep).
 */
import type { Client } from 'cassandra-driver';
import {
  conversationKey,
  expireConversations,
  expiryWriteTimestamp,
  unreadMayLieBelow,
  type ConversationExpiry,
  type ConvRecord,
  type Entry,
  type InboxKey,
  type UnreadItem,
} from '@seqline/core';
import { mapLimit, num, type Cql, type Statement } from './cql.ts';
import type { InboxEntrySource } from './conversation-facts-reader.ts';
import type { InboxMemory } from './conversation-memory.ts';
import {
  atTimestamp,
  expiryCellParams,
  recordParams,
  rowToRecord,
  type ConversationStatements,
  type ExpiryCells,
} from './conversation-tables.ts';

/** Unread ranges read at once while moving the horizon. */
const READS_IN_FLIGHT = 8;

/**
 * The timeline's retention in seconds: its table's default_time_to_live (schema/001_init.cql),
 * the one place it is set; 0 when entries never expire.
 */
export async function readTimelineRetention(client: Client, keyspace: string): Promise<number> {
  const result = await client.execute(
    'SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, 'timeline'],
    { prepare: true },
  );
  const ttl: unknown = result.first()?.get('default_time_to_live');
  return typeof ttl === 'number' && Number.isSafeInteger(ttl) && ttl > 0 ? ttl : 0;
}

/**
 * How long after a look the owner looks for a new horizon again: a thousandth of the retention
 * (4.3 h of 180 days). An expired message counts that much longer at most, on an inbox that is
 * appended to.
 */
export function horizonCheckIntervalMs(retentionSeconds: number): number {
  return retentionSeconds;
}

export interface ExpiryDeps {
  cql: Cql;
  q: ConversationStatements;
  source: InboxEntrySource;
  retentionSeconds: number;
}

/** A move goes to the oldest entry: its seq is the new horizon. */
export type ExpiryStep = { kind: 'none' } | { kind: 'move'; oldest: Entry } | { kind: 'rebuild' };

const NONE: ExpiryStep = { kind: 'none' };

/**
 * A lower bound of when `oldest` (the inbox's oldest entry) was written: not before its
 * sendTime (a copy is written at or after its send), and within the retention (it is still
 * stored). The rows of it and of every later entry live at least twice the retention past it.
 */
export function oldestWrittenAfter(oldest: Entry, now: number, retentionSeconds: number): number {
  return Math.max(now - retentionSeconds * 1000, Math.min(now, oldest.sendTime));
}

/**
 * What the owner does about expiry before it indexes an append to an inbox it holds at `mem`:
 * move the horizon to the oldest entry when that lies above the oldest seq the index counted
 * (entries expired), or nothing — no retention, looked recently, nothing expired, or the horizon
 * already moved at this watermark. A move counts the rows of the entries that expired since the
 * last one; those rows live twice the retention past the oldest entry counted then
 * (`oldestAt`), so when that is over, some may be gone uncounted: rebuild instead. An index that
 * does not know its first seq (written before schema version 8, or nothing indexed yet) takes
 * the oldest entry's, stored with the next index write.
 */
export async function expiryStep(deps: ExpiryDeps, inbox: InboxKey, mem: InboxMemory, now: number): Promise<ExpiryStep> {
  const { retentionSeconds } = deps;
  if (retentionSeconds <= 0) return NONE;
  if (mem.checkedAt !== undefined && now - mem.checkedAt < horizonCheckIntervalMs(retentionSeconds)) return NONE;
  mem.checkedAt = now;
  const [oldest] = await deps.source.readAfter({ inbox, afterSeq: 0, limit: 1 });
  if (oldest === undefined) return NONE;
  const { horizon, oldestAt, firstSeq, horizonWrittenAt } = mem.horizon;
  if (firstSeq === undefined && horizon === 0) {
    const cells = { firstSeq: oldest.seq, oldestAt: oldestWrittenAfter(oldest, now, retentionSeconds) };
    mem.horizon = { ...mem.horizon, ...cells };
    mem.pendingCells = { ...mem.pendingCells, ...cells };
    return NONE;
  }
  if (oldest.seq <= Math.max(horizon, firstSeq ?? 0)) return NONE;
  if (horizonWrittenAt !== undefined && horizonWrittenAt >= expiryWriteTimestamp(mem.watermark)) return NONE;
  if (oldestAt !== undefined && now - oldestAt > 2 * retentionSeconds * 1000) return { kind: 'rebuild' };
  return { kind: 'move', oldest };
}

/**
 * Moves the index to `horizon`: reads every record (none when nothing is indexed yet) and the
 * unread rows below the horizon of those that may hold some, writes core's expiry with `write`
 * (one partition, one mutation), and leaves `mem` as the store is then. A move that changes no
 * row writes nothing: the horizon rides with the next index write (mem.pendingCells).
 */
export async function moveHorizon(
  deps: ExpiryDeps,
  inbox: InboxKey,
  mem: InboxMemory,
  input: { oldest: Entry; now: number; write: (statements: Statement[]) => Promise<void> },
): Promise<ConversationExpiry> {
  const { cql, q } = deps;
  const horizon = input.oldest.seq;
  const oldestAt = oldestWrittenAfter(input.oldest, input.now, deps.retentionSeconds);
  // Every index write sets the watermark to a seq it indexed: at 0 the index holds no row.
  const records: ConvRecord[] = mem.watermark === 0 ? [] : (await cql.readAll(q.allRecords, [inbox])).map(rowToRecord);
  const unreadBelow = new Map(
    await mapLimit(
      records.filter((rec) => unreadMayLieBelow(rec, horizon)),
      READS_IN_FLIGHT,
      async (rec): Promise<[string, UnreadItem[]]> => {
        const convKey = conversationKey(rec.conv);
        const rows = await cql.readAll(q.unreadUpTo, [inbox, convKey, horizon - 1]);
        return [convKey, rows.map((row) => ({ convKey, seq: num(row.get('seq')), mention: row.get('mention') === true }))];
      },
    ),
  );
  const expiry = expireConversations({ horizon, records, unreadBelow });
  const cells: ExpiryCells = { ...mem.pendingCells, horizon, oldestAt };
  if (expiry.dropped.length + expiry.records.length + expiry.unreadRemove.length === 0) {
    mem.horizon = { ...mem.horizon, horizon, oldestAt };
    mem.pendingCells = cells;
    return expiry;
  }
  await input.write(expiryStatements(q, inbox, expiry, { watermark: mem.watermark, cells }));
  for (const rec of expiry.dropped) mem.records.set(conversationKey(rec.conv), null);
  for (const { after } of expiry.records) mem.records.set(conversationKey(after.conv), after);
  mem.horizon = { ...mem.horizon, horizon, oldestAt, horizonWrittenAt: expiryWriteTimestamp(mem.watermark) };
  mem.pendingCells = undefined;
  return expiry;
}

/**
 * The statements of one move (one partition): dropped records with their list rows and unread
 * rows, changed records and their list rows (same last_seq), one range delete of the expired
 * unread rows per conversation that had some, and the horizon beside the unchanged watermark.
 */
export function expiryStatements(
  q: ConversationStatements,
  inbox: InboxKey,
  expiry: ConversationExpiry,
  at: { watermark: number; cells: ExpiryCells },
): Statement[] {
  const below = expiry.horizon - 1;
  const out: Statement[] = [];
  for (const rec of expiry.dropped) {
    const key = conversationKey(rec.conv);
    out.push(
      { query: q.deleteRecord, params: [inbox, key] },
      { query: q.deleteListRow, params: [inbox, rec.lastSeq] },
      { query: q.deleteUnreadUpTo, params: [inbox, key, below] },
    );
  }
  for (const { after } of expiry.records) {
    const params = recordParams(inbox, after);
    out.push({ query: q.insertRecord, params }, { query: q.insertListRow, params });
  }
  for (const key of new Set(expiry.unreadRemove.map((item) => item.convKey))) {
    out.push({ query: q.deleteUnreadUpTo, params: [inbox, key, below] });
  }
  out.push({ query: q.setWatermark, params: [inbox, at.watermark, ...expiryCellParams(at.cells)] });
  return atTimestamp(out, expiryWriteTimestamp(at.watermark));
}
