/**
 * The conversation index's read side on LMDB (the writer is conversation-facts.ts, run inside
 * every inbox append). Each method does its reads in one synchronous run: lmdb-js serves them
 * from one read snapshot, so a record and its `last`, or a page and its records, agree.
 */
import {
  BadRequestError,
  checkConversationsArgs,
  CONVERSATION_HISTORY_MAX_LIMIT,
  conversationKey,
  hiddenFromOwner,
  withLatestEdit,
  type Conv,
  type ConversationIndex,
  type ConversationListPage,
  type ConversationState,
  type ConvRecord,
  type Entry,
  type InboxKey,
} from '@seqline/core';
import { isStorableConvKey, MAX_SEQ, type ConversationRows, type InboxLogDbs } from './conversation-dbs.ts';
import { fromJsonRow } from './json-rows.ts';

export class LmdbConversationIndex implements ConversationIndex {
  constructor(
    private readonly rows: ConversationRows,
    private readonly log: InboxLogDbs,
  ) {}

  async listConversations(inbox: InboxKey, page: { limit: number; beforeLastSeq?: number }): Promise<ConversationListPage> {
    const { limit, beforeLastSeq } = checkConversationsArgs({ limit: page.limit, beforeLastSeq: page.beforeLastSeq });
    const keys = this.rows.orderDown(inbox, beforeLastSeq ?? MAX_SEQ, beforeLastSeq === undefined, limit + 1);
    const convs: ConversationState[] = [];
    for (const { convKey } of keys) {
      if (convs.length === limit) return { convs, hasMore: true };
      const rec = this.rows.record(inbox, convKey);
      if (rec !== undefined) convs.push(this.withLast(inbox, rec));
    }
    return { convs, hasMore: false };
  }

  async getConversation(inbox: InboxKey, conv: Conv): Promise<ConversationState | null> {
    const rec = this.record(inbox, conversationKey(conv));
    return rec === undefined ? null : this.withLast(inbox, rec);
  }

  async conversationEntries(
    inbox: InboxKey,
    conv: Conv,
    page: { beforeSeq?: number; limit: number },
  ): Promise<{ entries: Entry[]; hasMore: boolean }> {
    const { limit, beforeSeq } = page;
    if (!isIntIn(limit, 1, CONVERSATION_HISTORY_MAX_LIMIT)) {
      throw new BadRequestError(`history: limit: must be an integer in 1-${CONVERSATION_HISTORY_MAX_LIMIT}, got ${String(limit)}`);
    }
    if (beforeSeq !== undefined && !isIntIn(beforeSeq, 1, MAX_SEQ)) {
      throw new BadRequestError(`history: beforeSeq: must be a positive integer, got ${String(beforeSeq)}`);
    }
    const convKey = conversationKey(conv);
    const rec = this.record(inbox, convKey);
    if (rec === undefined) return { entries: [], hasMore: false };
    const entries: Entry[] = [];
    // Cleared items keep their visible rows; clearedSeq bounds the read instead.
    for (const seq of this.rows.itemSeqsDown(inbox, convKey, beforeSeq ?? MAX_SEQ, rec.clearedSeq)) {
      if (entries.length === limit) return { entries, hasMore: true };
      const entry = this.shown(inbox, seq);
      if (entry !== null) entries.push(entry);
    }
    return { entries, hasMore: false };
  }

  async headSeq(inbox: InboxKey): Promise<number> {
    return this.rows.watermark(inbox);
  }

  async hiddenSeqs(inbox: InboxKey, entries: readonly Entry[]): Promise<Set<number>> {
    const hidden = new Set<number>();
    const records = new Map<string, ConvRecord | null>();
    for (const entry of entries) {
      const key = conversationKey(entry.conv);
      let rec = records.get(key);
      if (rec === undefined) {
        rec = this.record(inbox, key) ?? null;
        records.set(key, rec);
      }
      if (hiddenFromOwner(entry, this.rows.isDeleted(inbox, entry.seq), rec)) hidden.add(entry.seq);
    }
    return hidden;
  }

  /** A conversation key that could never be stored (conversation-dbs.ts) has no record. */
  private record(inbox: InboxKey, convKey: string): ConvRecord | undefined {
    if (!isStorableConvKey(convKey)) return undefined;
    return this.rows.record(inbox, convKey);
  }

  private withLast(inbox: InboxKey, rec: ConvRecord): ConversationState {
    return { ...rec, last: rec.lastMsgSeq === 0 ? null : this.shown(inbox, rec.lastMsgSeq) };
  }

  /** The entry at `seq` as history shows it: with its latest edit. */
  private shown(inbox: InboxKey, seq: number): Entry | null {
    const entry = fromJsonRow(this.log.entries.get([inbox, seq]));
    if (entry === undefined) return null;
    return withLatestEdit(entry, this.rows.edit(inbox, seq) ?? null);
  }
}

function isIntIn(n: unknown, min: number, max: number): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;
}
