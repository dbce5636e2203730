/**
 * The conversation index's read port (re-exported by ports.ts). Adapters keep the index in the
 * same store as the inbox and write it with the entries (LMDB: the same transaction; CQL: the
 * owner, after the entries, never ahead of them).
 */
import type { Conv, Entry } from '../entry.ts';
import type { InboxKey } from '../ids.ts';
import type { ConvRecord } from './rules.ts';
import type { ConversationState } from './view.ts';

export interface ConversationListPage {
  /** Newest activity first (lastSeq descending). */
  convs: ConversationState[];
  hasMore: boolean;
}

export interface ConversationIndex {
  /**
   * Conversations by lastSeq descending, those below `beforeLastSeq` when given (lastSeqs are
   * distinct inbox seqs, so paging by the last one returned skips and repeats nothing).
   */
  listConversations(input: ConversationListQuery): Promise<ConversationListPage>;
  /** One conversation, null when the inbox has no activity in it. */
  getConversation(input: ConversationRef): Promise<ConversationState | null>;
  /**
   * The conversation's visible activity entries (not recalled, deleted or cleared) with
   * seq < beforeSeq (absent: from the newest), newest first, at most `limit`, each with its
   * latest edit (withLatestEdit): `history {conv}` and `conversations {lastMessages}`.
   */
  conversationEntries(input: ConversationEntriesPage): Promise<{ entries: Entry[]; hasMore: boolean }>;
  /** The inbox seq the index is exact at (its watermark); sync from here after a bootstrap. */
  headSeq(inbox: InboxKey): Promise<number>;
  /**
   * Which of these entries of the inbox its owner no longer sees (core's hiddenFromOwner:
   * deleted for them, or activity at or below its conversation's clearedSeq), so that sync and
   * history can drop them. Judged by the index as it is now, not as it was at each entry.
   */
  hiddenSeqs(input: InboxEntries): Promise<Set<number>>;
}

/** A page of an inbox's conversations (ConversationIndex.listConversations). */
export interface ConversationListQuery {
  inbox: InboxKey;
  limit: number;
  beforeLastSeq?: number;
}

/** One conversation of an inbox (ConversationIndex.getConversation). */
export interface ConversationRef {
  inbox: InboxKey;
  conv: Conv;
}

/** A page of one conversation's activity entries (ConversationIndex.conversationEntries). */
export interface ConversationEntriesPage extends ConversationRef {
  limit: number;
  beforeSeq?: number;
}

/** Entries of an inbox to judge (ConversationIndex.hiddenSeqs). */
export interface InboxEntries {
  inbox: InboxKey;
  entries: readonly Entry[];
}

/** What a rebuild of one inbox's conversation index found (`seqline-admin conversations rebuild`). */
export interface ConversationRebuildReport {
  /** True when anything stored (a record or a side-table row) differed from the recount. */
  differed: boolean;
  /** Conversation keys whose record or items differed. */
  changedConversations: string[];
  /** Conversations in the rebuilt index. */
  conversations: number;
  /** Inbox entries replayed. */
  entries: number;
  /** The watermark after the rebuild: the inbox head at the time. */
  headSeq: number;
}

/**
 * A conversation's state as the index writer computed it in an append (a record of the index,
 * exact at the write's watermark), with its `last` when the writer held that entry — the
 * message just appended, or one the entry's rules looked up — and absent when it did not (a read
 * or clear leaves `last` an older message, never looked at): a reader then fetches it.
 */
export interface IndexedState extends ConvRecord {
  last?: Entry | null;
}

/**
 * What one append's index write left (TimelineAppend.indexed): the states of every
 * conversation whose record the written entries changed, exact at `watermark`. A conversation an
 * entry names whose record it did not change (a read or clear of a conversation the inbox has
 * nothing of) is not among them.
 */
export interface IndexedConversations {
  /** The seq the index is exact at once this write landed (the last entry it applied). */
  watermark: number;
  states: IndexedState[];
}

/**
 * Adds what an inbox's index does not hold to conversation states: a read-fanout group's stream
 * side (lastGseq, readGseq, the stream's unread and `@all` mentions, a newer `last`), counted
 * from the group stream when read. States it does not concern come back unchanged, in order.
 */
export interface ConversationStreamSides {
  withStreamSides(input: { inbox: InboxKey; states: ConversationState[] }): Promise<ConversationState[]>;
}

/**
 * Rebuilds one inbox's index from the inbox. Run by the inbox's single writer (serialised with
 * its appends), so the rebuilt index is exact at the head and never ahead of the entries.
 */
export interface ConversationRebuilder {
  rebuildConversations(inbox: InboxKey): Promise<ConversationRebuildReport>;
}

/**
 * Indexes the entries an inbox's index trails (a failed index write, a predecessor's undone
 * part), serialised with the inbox's index writes. Run by the inbox's single writer (fenced by
 * it, as its appends are); resolves with the watermark the index is exact at, rejects on failure.
 */
export interface ConversationCatchUp {
  catchUpConversations(input: { inbox: InboxKey }): Promise<number>;
}
