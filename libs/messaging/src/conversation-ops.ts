/**
 * The conversation ops: the list, one conversation's history, and the three
 * "for me" writes — a conversation read, delete, clear. Each write is one control entry in the
 * caller's own inbox; the index (maintained by the stores on append) and the caller's other
 * devices (by sync) learn it from there. Nothing here is sent to anyone else.
 */
import {
  buildClearEntry,
  buildConversationReadEntry,
  buildDeleteEntry,
  clampLimit,
  clearAppinfo,
  CONVERSATION_HISTORY_DEFAULT_LIMIT,
  CONVERSATION_HISTORY_MAX_LIMIT,
  deleteAppinfo,
  inboxKey,
  InternalError,
  mergeConversationMessages,
  NotFoundError,
  readAppinfo,
  type Conv,
  type ConversationIndex,
  type ConversationState,
  type InboxKey,
  type InboxWriter,
  type NewEntry,
  type TimelineStore,
} from '@seqline/core';
import pLimit from 'p-limit';
import type { Caller, ConversationsInput, ConversationsResult, HistoryResult, ListedConversation } from './api.ts';
import type { MessagingEnv } from './deps.ts';
import { withStreamSides, type GroupConversationDeps } from './group-conversations.ts';

type IndexDeps = { stores: { conversations: ConversationIndex } };

/** A control entry of the caller's: the index, its appinfo and the writer. */
export type OwnEntryDeps = IndexDeps & {
  writers: { inbox: InboxWriter };
  env: Pick<MessagingEnv, 'clock' | 'newId'>;
};

/** Conversations whose last messages are read at once for `conversations {lastMessages}`. */
const LAST_MESSAGES_CONCURRENCY = 16;

/**
 * The list, newest activity first, with each conversation's last visible messages when asked.
 * headSeq is read before the list: an entry appended in between may then show up both in the
 * list and in the sync from headSeq (a client merges by seq), but is never in neither.
 * Read-fanout groups get their stream side (group-conversations.ts); the order stays the
 * inbox index's (lastSeq), so beforeLastSeq paging is unchanged.
 */
export async function conversations(
  d: IndexDeps & GroupConversationDeps,
  caller: Caller,
  input: ConversationsInput,
): Promise<ConversationsResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const headSeq = await d.stores.conversations.headSeq(inbox);
  const page = await d.stores.conversations.listConversations({
    inbox,
    limit: input.limit,
    ...(input.beforeLastSeq !== undefined ? { beforeLastSeq: input.beforeLastSeq } : {}),
  });
  const listed = await withStreamSides(d, caller, page.convs, input.lastMessages);
  if (input.lastMessages === 0) return { convs: listed.map(({ state }) => ({ state })), headSeq, hasMore: page.hasMore };
  const limit = pLimit(LAST_MESSAGES_CONCURRENCY);
  const convs = await Promise.all(
    listed.map(({ state, tail, held }) =>
      limit(async (): Promise<ListedConversation> => {
        const { entries } = await d.stores.conversations.conversationEntries({ inbox, conv: state.conv, limit: input.lastMessages });
        const messages =
          state.stream === undefined ? entries.reverse() : mergeConversationMessages(entries, tail, input.lastMessages, held);
        return { state, messages };
      }),
    ),
  );
  return { convs, headSeq, hasMore: page.hasMore };
}

/** `history {conv}`: that conversation's visible entries (edits applied), newest first. */
export async function conversationHistory(
  d: IndexDeps,
  caller: Caller,
  conv: Conv,
  beforeSeq: number,
  limit: number,
): Promise<HistoryResult> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const n = clampLimit(limit, CONVERSATION_HISTORY_DEFAULT_LIMIT, CONVERSATION_HISTORY_MAX_LIMIT);
  const from = beforeSeq > 0 && beforeSeq < Number.MAX_SAFE_INTEGER ? { beforeSeq } : {};
  const { entries, hasMore } = await d.stores.conversations.conversationEntries({ inbox, conv, ...from, limit: n });
  return { entries, hasMore };
}

/**
 * The caller's state of a conversation it has activity in. None (never a message or a group
 * event there) is NOT_FOUND, for groups too: these ops act on the caller's own inbox, so the
 * answer says nothing about whether a group exists or who is in it; a member who left keeps
 * its history and may still read or clear it.
 */
async function ownConversation(d: IndexDeps, inbox: InboxKey, conv: Conv, op: string): Promise<ConversationState> {
  const state = await d.stores.conversations.getConversation({ inbox, conv });
  if (state === null) throw new NotFoundError(`${op}: no conversation with ${conv.type} ${conv.id} in your inbox`);
  return state;
}

export async function appendOwn(d: OwnEntryDeps, inbox: InboxKey, entry: NewEntry): Promise<{ seq: number }> {
  const [outcome] = await d.writers.inbox.append({ inbox, entries: [entry] });
  if (!outcome) throw new InternalError('append returned no outcome');
  return { seq: outcome.seq };
}

/**
 * `read {conv, upToSeq}`: a `read` entry {conv, upToSeq} in the reader's inbox; the index moves
 * readSeq to min(upToSeq, lastSeq), never back. No receipts: see docs/decisions.md.
 */
export async function readConversation(d: OwnEntryDeps, caller: Caller, conv: Conv, upToSeq: number): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  await ownConversation(d, inbox, conv, 'read');
  const appinfo = readAppinfo({ reader: caller.user, made: d.env.newId() });
  return appendOwn(d, inbox, buildConversationReadEntry(caller.user, conv, upToSeq, d.env.clock.now(), appinfo));
}

/**
 * `clear {conv, upToSeq?}`: without upToSeq, up to the conversation's lastSeq as it is now —
 * what the user saw when clearing; a message arriving meanwhile stays.
 */
export async function clearConversation(d: OwnEntryDeps, caller: Caller, conv: Conv, upToSeq?: number): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const state = await ownConversation(d, inbox, conv, 'clear');
  const appinfo = clearAppinfo({ owner: caller.user, made: d.env.newId() });
  const entry = buildClearEntry(caller.user, conv, upToSeq ?? state.lastSeq, d.env.clock.now(), appinfo);
  return appendOwn(d, inbox, entry);
}

/** Point reads of the seqs a delete names, at once. */
const DELETE_LOOKUP_CONCURRENCY = 16;

/**
 * `delete {seqs}`: every seq must be an entry of the caller's inbox, else NOT_FOUND and nothing
 * written (a partial delete would leave the client unsure what went). The `delete` entry's conv
 * is the caller, like a read by seqs: it names entries of several conversations.
 */
export async function deleteForMe(
  d: OwnEntryDeps & { stores: { timeline: TimelineStore } },
  caller: Caller,
  seqs: number[],
): Promise<{ seq: number }> {
  const inbox = inboxKey(caller.tenant, caller.user);
  const unique = [...new Set(seqs)].sort((a, b) => a - b);
  const limit = pLimit(DELETE_LOOKUP_CONCURRENCY);
  const found = await Promise.all(unique.map((seq) => limit(() => d.stores.timeline.getEntry({ inbox, seq }))));
  const missing = unique.filter((_, i) => found[i] === null);
  if (missing.length > 0) {
    throw new NotFoundError(`delete: not in your inbox: seq ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
  }
  const appinfo = deleteAppinfo({ owner: caller.user, made: d.env.newId() });
  return appendOwn(d, inbox, buildDeleteEntry(caller.user, unique, d.env.clock.now(), appinfo));
}
