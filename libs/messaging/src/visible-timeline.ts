/**
 * The inbox as its owner sees it: entries deleted for them or cleared are skipped by sync
 * and history, and a sync answer names the conversations its entries touch (sync-convs.ts).
 * Reads only: the stores maintain the conversation index on append.
 */
import {
  conversationKey,
  conversationTouch,
  isActivity,
  type Conv,
  type ConversationIndex,
  type Entry,
  type InboxKey,
  type TimelineStore,
} from '@seqline/core';
import pLimit from 'p-limit';

/** Rows read per round once the first round (limit + 1) met hidden entries. */
const SCAN_BATCH = 500;
/** Parallel point reads of the entries a read by seqs or a delete names. */
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
    const hidden = await d.stores.conversations.hiddenSeqs({ inbox, entries: rows });
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
  return visiblePage(d, inbox, (cursor, count) => d.stores.timeline.readAfter({ inbox, afterSeq: cursor, limit: count }), afterSeq, limit);
}

/** Visible entries with seq < beforeSeq, descending. */
export function visibleBefore(d: VisibleReadDeps, inbox: InboxKey, beforeSeq: number, limit: number) {
  return visiblePage(
    d,
    inbox,
    (cursor, count) => d.stores.timeline.readBefore({ inbox, beforeSeq: cursor, limit: count }),
    beforeSeq,
    limit,
  );
}

/** A conversation a page touches, and the newest entry of the page touching it. */
export interface ConversationTouch {
  conv: Conv;
  seq: number;
}

/**
 * The conversations `entries` (ascending) touch, by key, each with the newest entry touching
 * it (apply.ts states which): an activity entry, a conversation read, a clear, a recall or an
 * edit its `conv` (recall and edit entries carry their message's conv); a read by seqs or a delete
 * those of the activity entries it names, looked up in the page first, then in the inbox.
 */
export async function conversationTouches(
  d: VisibleReadDeps,
  inbox: InboxKey,
  entries: readonly Entry[],
): Promise<Map<string, ConversationTouch>> {
  const touches = new Map<string, ConversationTouch>();
  const touch = (conv: Conv, seq: number) => {
    const key = conversationKey(conv);
    if ((touches.get(key)?.seq ?? 0) < seq) touches.set(key, { conv, seq });
  };
  const naming: Array<{ seq: number; named: number[] }> = [];
  for (const e of entries) {
    const touched = conversationTouch(e);
    if (touched === null) continue;
    if ('conv' in touched) touch(touched.conv, e.seq);
    else naming.push({ seq: e.seq, named: touched.namedSeqs });
  }
  const inPage = new Map(entries.map((e) => [e.seq, e]));
  const limit = pLimit(LOOKUP_CONCURRENCY);
  const wanted = [...new Set(naming.flatMap((n) => n.named))];
  const found = await Promise.all(
    wanted.map((seq) => limit(async () => inPage.get(seq) ?? (await d.stores.timeline.getEntry({ inbox, seq })))),
  );
  const targets = new Map(wanted.map((seq, i) => [seq, found[i] ?? null]));
  for (const { seq, named } of naming) {
    for (const n of named) {
      const t = targets.get(n);
      if (t !== undefined && t !== null && t.seq < seq && isActivity(t)) touch(t.conv, seq);
    }
  }
  return touches;
}
