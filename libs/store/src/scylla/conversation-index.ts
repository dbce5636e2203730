/**
 * The read side of the conversation index on CQL (the port core declares in
 * conversations/port.ts). Any process may read it: every answer comes from rows the inbox's
 * owner wrote after the entries they describe, so it is exact at some watermark at or below
 * the inbox head, never ahead of it. The write side is conversation-writer.ts.
 */
import {
  BadRequestError,
  CONVERSATION_HISTORY_MAX_LIMIT,
  checkConversationsArgs,
  conversationKey,
  hiddenFromOwner,
  isActivity,
  withLatestEdit,
  type ConversationIndex,
  type ConversationListPage,
  type ConversationState,
  type ConvRecord,
  type EditRef,
  type Entry,
  type InboxKey,
  type ConversationEntriesPage,
  type ConversationRef,
  type ConversationListQuery,
  type InboxEntries,
} from '@seqline/core';
import { chunks, num, type Cql } from './cql.ts';
import { readEdits, type InboxEntrySource } from './conversation-facts-reader.ts';
import { conversationStatements, readWatermark, rowToRecord, type ConversationStatements } from './conversation-tables.ts';

/** Keys per IN list. */
const IN_CHUNK = 100;

export class CqlConversationIndex implements ConversationIndex {
  readonly q: ConversationStatements;

  constructor(
    private readonly cql: Cql,
    private readonly source: InboxEntrySource,
  ) {
    this.q = conversationStatements(cql);
  }

  /** One range read of conv_list (each row carries its record), then the `last` entries. */
  async listConversations({ inbox, ...page }: ConversationListQuery): Promise<ConversationListPage> {
    const { limit, beforeLastSeq } = checkConversationsArgs({ limit: page.limit, beforeLastSeq: page.beforeLastSeq });
    const rows =
      beforeLastSeq === undefined
        ? await this.cql.readAll(this.q.listFirst, [inbox, limit + 1])
        : await this.cql.readAll(this.q.listBefore, [inbox, beforeLastSeq, limit + 1]);
    const records = rows.slice(0, limit).map(rowToRecord);
    return { convs: await this.withLast(inbox, records), hasMore: rows.length > limit };
  }

  async getConversation({ inbox, conv }: ConversationRef): Promise<ConversationState | null> {
    const rec = await this.record(inbox, conversationKey(conv));
    if (rec === null) return null;
    const [state] = await this.withLast(inbox, [rec]);
    return state ?? null;
  }

  /**
   * The visible items below beforeSeq, newest first, read together with the record: items at or
   * below its clearedSeq are hidden, and being the oldest they can only end the page.
   */
  async conversationEntries({ inbox, conv, ...page }: ConversationEntriesPage): Promise<{ entries: Entry[]; hasMore: boolean }> {
    const { limit, beforeSeq } = checkHistoryPage(page);
    const key = conversationKey(conv);
    const [rec, rows] = await Promise.all([
      this.record(inbox, key),
      beforeSeq === undefined
        ? this.cql.readAll(this.q.visibleNewest, [inbox, key, limit + 1])
        : this.cql.readAll(this.q.visibleBefore, [inbox, key, beforeSeq, limit + 1]),
    ]);
    if (rec === null) return { entries: [], hasMore: false };
    const seqs = rows.map((row) => num(row.get('seq')));
    const shown = seqs.filter((seq) => seq > rec.clearedSeq);
    const hasMore = shown.length > limit;
    const wanted = shown.slice(0, limit);
    const [entries, edits] = await Promise.all([this.source.entriesAt(inbox, wanted), readEdits(this.cql, this.q, inbox, wanted)]);
    const out: Entry[] = [];
    for (const seq of wanted) {
      const entry = entries.get(seq);
      if (entry !== undefined) out.push(withLatestEdit(entry, edits.get(seq) ?? null));
    }
    if (out.length === wanted.length) return { entries: out, hasMore };
    // Items whose entries are gone: expired ones outlive their entries a little (an item's TTL
    // runs from its index write) and lie below the oldest entry, as does everything older.
    const [oldest] = await this.source.readAfter({ inbox, afterSeq: 0, limit: 1 });
    const expired = oldest === undefined || wanted.some((seq) => seq < oldest.seq);
    return { entries: out, hasMore: hasMore && !expired };
  }

  /** 0 while a rebuild's sentinel is set: its rows are exact at no seq (conversation-rebuild.ts). */
  async headSeq(inbox: InboxKey): Promise<number> {
    const stored = await readWatermark(this.cql, this.q, inbox);
    return stored.rebuilding ? 0 : stored.seq;
  }

  /** Deleted marks of the entries and the records of their activity's conversations, read together. */
  async hiddenSeqs({ inbox, entries }: InboxEntries): Promise<Set<number>> {
    const hidden = new Set<number>();
    if (entries.length === 0) return hidden;
    const seqs = [...new Set(entries.map((e) => e.seq))];
    const convKeys = [...new Set(entries.filter(isActivity).map((e) => conversationKey(e.conv)))];
    const [deletedPages, recordPages] = await Promise.all([
      Promise.all(chunks(seqs, IN_CHUNK).map((list) => this.cql.readAll(this.q.deletedIn, [inbox, list]))),
      Promise.all(chunks(convKeys, IN_CHUNK).map((keys) => this.cql.readAll(this.q.recordsIn, [inbox, keys]))),
    ]);
    const deleted = new Set(deletedPages.flat().map((row) => num(row.get('seq'))));
    const records = new Map<string, ConvRecord>();
    for (const row of recordPages.flat()) {
      const rec = rowToRecord(row);
      records.set(conversationKey(rec.conv), rec);
    }
    for (const entry of entries) {
      if (hiddenFromOwner(entry, deleted.has(entry.seq), records.get(conversationKey(entry.conv)) ?? null)) hidden.add(entry.seq);
    }
    return hidden;
  }

  private async record(inbox: InboxKey, convKey: string): Promise<ConvRecord | null> {
    const row = (await this.cql.read(this.q.record, [inbox, convKey])).first();
    return row === null ? null : rowToRecord(row);
  }

  /** Records with their `last` (the entry at lastMsgSeq with its latest edit), entries and edits read in parallel. */
  private async withLast(inbox: InboxKey, records: readonly ConvRecord[]): Promise<ConversationState[]> {
    const seqs = records.filter((rec) => rec.lastMsgSeq > 0).map((rec) => rec.lastMsgSeq);
    const [entries, edits] =
      seqs.length === 0
        ? [new Map<number, Entry>(), new Map<number, EditRef>()]
        : await Promise.all([this.source.entriesAt(inbox, seqs), readEdits(this.cql, this.q, inbox, seqs)]);
    return records.map((rec) => {
      const entry = rec.lastMsgSeq > 0 ? entries.get(rec.lastMsgSeq) : undefined;
      return { ...rec, last: entry === undefined ? null : withLatestEdit(entry, edits.get(rec.lastMsgSeq) ?? null) };
    });
  }
}

const isIntIn = (n: unknown, min: number, max: number): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;

/** Out of range is BAD_REQUEST, never clamped (as core's checkConversationsArgs). */
function checkHistoryPage(page: { beforeSeq?: number; limit: number }): { beforeSeq: number | undefined; limit: number } {
  if (!isIntIn(page.limit, 1, CONVERSATION_HISTORY_MAX_LIMIT)) {
    throw new BadRequestError(`history: limit: must be an integer in 1-${CONVERSATION_HISTORY_MAX_LIMIT}, got ${String(page.limit)}`);
  }
  if (page.beforeSeq !== undefined && !isIntIn(page.beforeSeq, 1, Number.MAX_SAFE_INTEGER)) {
    throw new BadRequestError(`history: beforeSeq: must be a positive integer, got ${String(page.beforeSeq)}`);
  }
  return { limit: page.limit, beforeSeq: page.beforeSeq };
}
