/**
 * Rebuilds one inbox's conversation index on LMDB from the inbox (`seqline-admin conversations
 * rebuild`). It runs as one work of the WriteBatcher, so it is serialised with the inbox's
 * appends and sees every committed entry: core's recount of the stored entries is compared row
 * by row with what is stored, only the rows that differ are rewritten, and the watermark is
 * set to the head. A correct index is left byte for byte as it was.
 *
 * All or nothing: the writes run in a child transaction of the batch's write transaction. A
 * work that throws fails only itself (write-batcher.ts), so without it a write failing half-way
 * would commit the rows before it, and the next append would count on top of a half-rebuilt
 * index (docs/decisions.md, "Rebuild is all or nothing").
 */
import {
  conversationItemKey,
  conversationKey,
  countsAsUnread,
  isActivity,
  mentionsUser,
  recountInboxIndex,
  splitKey,
  type ConversationRebuilder,
  type ConversationRebuildReport,
  type Entry,
  type InboxKey,
} from '@seqline/core';
import { ConversationRows, ITEM_COUNTED, ITEM_MENTION, MAX_SEQ, type IndexRow, type InboxLogDbs } from './conversation-dbs.ts';
import type { ConversationIndexWriter } from './conversation-facts.ts';
import { fromJsonRow } from './json-rows.ts';
import type { WriteBatcher } from './write-batcher.ts';

export class LmdbConversationRebuilder implements ConversationRebuilder {
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
    private readonly writer: ConversationIndexWriter,
    private readonly writes: WriteBatcher,
  ) {}

  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport> {
    return this.writes.run(() => this.rebuildInTxn(inbox));
  }

  /** Inside the write transaction: everything is computed before the first write. */
  private rebuildInTxn(inbox: InboxKey): ConversationRebuildReport {
    const range = this.log.entries.getRange({ start: [inbox, 0], end: [inbox, MAX_SEQ], inclusiveEnd: true });
    const entries = Array.from(range, ({ value }) => fromJsonRow(value));
    const headSeq = entries[entries.length - 1]?.seq ?? 0;
    const self = splitKey(inbox).id;
    const recount = recountInboxIndex(entries, self);
    const bySeq = new Map(entries.map((e) => [e.seq, e]));

    const items: Array<{ convKey: string; seq: number; flags: number }> = [];
    for (const entry of entries) {
      if (!isActivity(entry)) continue;
      const convKey = conversationKey(entry.conv);
      if (!recount.visible.has(conversationItemKey(convKey, entry.seq))) continue;
      const flags = countsAsUnread(entry, self) ? ITEM_COUNTED | (mentionsUser(entry, self) ? ITEM_MENTION : 0) : 0;
      items.push({ convKey, seq: entry.seq, flags });
    }
    const expected = rowMap(this.rows.rowsOf(inbox, { records: recount.records, items, deleted: recount.deleted, edits: recount.edits }));
    const stored = rowMap(this.rows.storedRows(inbox));

    const changed = new Set<string>();
    const toPut: IndexRow[] = [];
    const toRemove: IndexRow[] = [];
    const note = (row: IndexRow) => {
      const convKey = ConversationRows.convKeyOf(row) ?? convOfSeq(bySeq, ConversationRows.seqOf(row));
      if (convKey !== undefined) changed.add(convKey);
    };
    for (const [key, row] of expected) {
      const was = stored.get(key);
      if (was !== undefined && valueText(was) === valueText(row)) continue;
      toPut.push(row);
      note(row);
      if (was !== undefined) note(was);
    }
    for (const [key, row] of stored) {
      if (expected.has(key)) continue;
      toRemove.push(row);
      note(row);
    }

    // Synchronous inside the batch's transaction; a throw aborts the child and is rethrown.
    void this.rows.db.childTransaction(() => {
      for (const row of toRemove) this.rows.removeRow(row);
      for (const row of toPut) this.rows.putRow(row);
      if (this.rows.watermark(inbox) !== headSeq) this.rows.putWatermark(inbox, headSeq);
    });
    this.writer.forget(inbox);
    return {
      differed: toPut.length + toRemove.length > 0,
      changedConversations: [...changed].sort(),
      conversations: recount.records.size,
      entries: entries.length,
      headSeq,
    };
  }
}

function rowMap(rows: IndexRow[]): Map<string, IndexRow> {
  return new Map(rows.map((row) => [JSON.stringify(row.key), row]));
}

function valueText(row: IndexRow): string {
  return JSON.stringify(row.value);
}

/** A deleted or edit row belongs to the conversation of its entry, when that is activity. */
function convOfSeq(bySeq: ReadonlyMap<number, Entry>, seq: number | undefined): string | undefined {
  const entry = seq === undefined ? undefined : bySeq.get(seq);
  return entry !== undefined && isActivity(entry) ? conversationKey(entry.conv) : undefined;
}
