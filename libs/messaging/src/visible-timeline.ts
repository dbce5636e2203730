/**
 * The inbox as its owner sees it (v1.1): entries deleted for them or cleared are skipped by sync
 * and history, and a sync answer names the conversations its entries touch. Reads only: the
 * stores maintain the conversation index on append.
 */
import {
  conversationKey,
  conversationTouch,
  isActivity,
  type Conv,
  type ConversationIndex,
  type ConversationState,
  type Entry,
  type InboxKey,
  type TimelineStore,
} from '@seqline/core';
import pLimit from 'p-limit';

/** Rows read per round once the first round (limit + 1) met hidden entries. */
const SCAN_BATCH = 500;
/** Parallel point reads of the entries a v1 read or a delete names. */
const LOOKUP_CONCURRENCY = 16;

export type VisibleReadDeps = { stores: { timeline: TimelineStore; conversations: ConversationIndex } };

/** Reads up to `count` rows past `cursor` in the page's direction. */
type RowReader = (cursor: number, count: number) => Promise<Entry[]>;

/**
 * A page of `limit` visible entries. Hidden ones are skipped and scanning goes on past them
 * until the page is full or the inbox ends, so `hasMore` is true only when a visible entry
 * remains: a page that came back empty with hasMore would make a client ask again forever.
 */
async function visiblePage(
  d: VisibleReadDeps,
  inbox: InboxKey,
  read: RowReader,
  start: number,
  limit: number,
): Promise<{ items: Entry[]; hasMore: boolean }> {
  const items: Entry[] = [];
  let cursor = start;
  for (let round = 0; ; round++) {
    const want = round === 0 ? limit + 1 : Math.max(SCAN_BATCH, limit + 1 - items.length);
    const rows = await read(cursor, want);
    const last = rows.at(-1);
    if (last === undefined) return { items, hasMore: false };
    const hidden = await d.stores.conversations.hiddenSeqs(inbox, rows);
    for (const row of rows) {
      if (hidden.has(row.seq)) continue;
      if (items.length === limit) return { items, hasMore: true };
      items.push(row);
    }
    if (rows.length < want) return { items, hasMore: false };
    cursor = last.seq;
  }
}

/** Visible entries with seq > afterSeq, ascending. */
export function visibleAfter(d: VisibleReadDeps, inbox: InboxKey, afterSeq: number, limit: number) {
  return visiblePage(d, inbox, (cursor, count) => d.stores.timeline.readAfter(inbox, cursor, count), afterSeq, limit);
}

/** Visible entries with seq < beforeSeq, descending. */
export function visibleBefore(d: VisibleReadDeps, inbox: InboxKey, beforeSeq: number, limit: number) {
  return visiblePage(d, inbox, (cursor, count) => d.stores.timeline.readBefore(inbox, cursor, count), beforeSeq, limit);
}

/**
 * The conversations `entries` touch, as the index has them now (apply.ts states which): an
 * activity entry, a conversation read, a clear, a recall or an edit its `conv` (recall and edit
 * entries carry their message's conv); a v1 read or a delete those of the activity entries it
 * names. Conversations the index does not hold (yet, or any more) are left out.
 */
export async function touchedConversations(d: VisibleReadDeps, inbox: InboxKey, entries: readonly Entry[]): Promise<ConversationState[]> {
  const convs = new Map<string, Conv>();
  const named = new Set<number>();
  for (const e of entries) {
    const touched = conversationTouch(e);
    if (touched === null) continue;
    if ('conv' in touched) convs.set(conversationKey(touched.conv), touched.conv);
    else for (const seq of touched.namedSeqs) named.add(seq);
  }
  const inPage = new Map(entries.map((e) => [e.seq, e]));
  const limit = pLimit(LOOKUP_CONCURRENCY);
  const targets = await Promise.all(
    [...named].map((seq) => limit(async () => inPage.get(seq) ?? (await d.stores.timeline.getEntry(inbox, seq)))),
  );
  for (const t of targets) if (t !== null && isActivity(t)) convs.set(conversationKey(t.conv), t.conv);
  const states = await Promise.all([...convs.values()].map((conv) => d.stores.conversations.getConversation(inbox, conv)));
  return states.filter((s): s is ConversationState => s !== null);
}
