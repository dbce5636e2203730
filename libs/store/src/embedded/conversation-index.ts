/**
 * The conversation index's read side on LMDB (the writer is conversation-writer.ts, run inside
 * every inbox append). Each method does its reads in one synchronous run: lmdb-js serves them
 * from one read snapshot, so a record and its `last`, or a page and its records, agree — and
 * the space it reads is the one live in that snapshot (a rebuild's switch, conversation-dbs.ts).
 */
import {
  BadRequestError,
  checkConversationsArgs,
  CONVERSATION_HISTORY_MAX_LIMIT,
  conversationKey,
  hiddenFromOwner,
  withLatestEdit,
  type ConversationIndex,
  type ConversationListPage,
  type ConversationState,
  type ConvRecord,
  type Entry,
  type InboxKey,
  type ConversationEntriesPage,
  type ConversationRef,
  type ConversationListQuery,
  type InboxEntries,
} from '@seqline/core';
import { isStorableConvKey, MAX_SEQ, type ConversationRows, type InboxLogDbs } from './conversation-dbs.ts';
import { fromJsonRow } from './json-rows.ts';

export class LmdbConversationIndex implements ConversationIndex {
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
  ) {}

  async listConversations({ inbox, ...page }: ConversationListQuery): Promise<ConversationListPage> {
    const { limit, beforeLastSeq } = checkConversationsArgs({ limit: page.limit, beforeLastSeq: page.beforeLastSeq });
    const rows = this.rows.live(inbox);
    const keys = rows.orderDown(inbox, beforeLastSeq ?? MAX_SEQ, beforeLastSeq === undefined, limit + 1);
    const convs: ConversationState[] = [];
    for (const { convKey } of keys) {
      if (convs.length === limit) return { convs, hasMore: true };
      const rec = rows.record(inbox, convKey);
      if (rec !== undefined) convs.push(this.withLast(rows, inbox, rec));
    }
    return { convs, hasMore: false };
  }

  async getConversation({ inbox, conv }: ConversationRef): Promise<ConversationState | null> {
    const rows = this.rows.live(inbox);
    const rec = record(rows, inbox, conversationKey(conv));
    return rec === undefined ? null : this.withLast(rows, inbox, rec);
  }

  async conversationEntries({ inbox, conv, ...page }: ConversationEntriesPage): Promise<{ entries: Entry[]; hasMore: boolean }> {
    const { limit, beforeSeq } = page;
    if (!isIntIn(limit, 1, CONVERSATION_HISTORY_MAX_LIMIT)) {
      throw new BadRequestError(`history: limit: must be an integer in 1-${CONVERSATION_HISTORY_MAX_LIMIT}, got ${String(limit)}`);
    }
    if (beforeSeq !== undefined && !isIntIn(beforeSeq, 1, MAX_SEQ)) {
      throw new BadRequestError(`history: beforeSeq: must be a positive integer, got ${String(beforeSeq)}`);
    }
    const convKey = conversationKey(conv);
    const rows = this.rows.live(inbox);
    const rec = record(rows, inbox, convKey);
    if (rec === undefined) return { entries: [], hasMore: false };
    const entries: Entry[] = [];
    // Cleared items keep their visible rows; clearedSeq bounds the read instead.
    for (const seq of rows.itemSeqsDown(inbox, convKey, beforeSeq ?? MAX_SEQ, rec.clearedSeq)) {
      if (entries.length === limit) return { entries, hasMore: true };
      const entry = this.shown(rows, inbox, seq);
      if (entry !== null) entries.push(entry);
    }
    return { entries, hasMore: false };
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    return this.rows.live(inbox).watermark(inbox);
  }

  async hiddenSeqs({ inbox, entries }: InboxEntries): Promise<Set<number>> {
    const rows = this.rows.live(inbox);
    const hidden = new Set<number>();
    const records = new Map<string, ConvRecord | null>();
    for (const entry of entries) {
      const key = conversationKey(entry.conv);
      let rec = records.get(key);
      if (rec === undefined) {
        rec = record(rows, inbox, key) ?? null;
        records.set(key, rec);
      }
      if (hiddenFromOwner(entry, rows.isDeleted(inbox, entry.seq), rec)) hidden.add(entry.seq);
    }
    return hidden;
  }

  private withLast(rows: ConversationRows, inbox: InboxKey, rec: ConvRecord): ConversationState {
    return { ...rec, last: rec.lastMsgSeq === 0 ? null : this.shown(rows, inbox, rec.lastMsgSeq) };
  }

  /** The entry at `seq` as history shows it: with its latest edit. */
  private shown(rows: ConversationRows, inbox: InboxKey, seq: number): Entry | null {
    const entry = fromJsonRow(this.log.entries.get([inbox, seq]));
    if (entry === undefined) return null;
    return withLatestEdit(entry, rows.edit(inbox, seq) ?? null);
  }
}

/** A conversation key that could never be stored (conversation-dbs.ts) has no record. */
function record(rows: ConversationRows, inbox: InboxKey, convKey: string): ConvRecord | undefined {
  if (!isStorableConvKey(convKey)) return undefined;
  return rows.record(inbox, convKey);
}

function isIntIn(n: unknown, min: number, max: number): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;
}
