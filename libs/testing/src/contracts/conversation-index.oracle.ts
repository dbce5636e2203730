/**
 * The oracle side of the ConversationIndex contract: builds batches of a random history the way
 * a writer hands them to TimelineStore.append (seqs above the head, duplicates of earlier
 * appinfos carried along), and compares everything the port answers with core's recount of
 * the inbox as the store returns it.
 */
import { expect } from 'vitest';
import {
  conversationKey,
  dedupKeyOf,
  hiddenFromOwner,
  recountInboxIndex,
  withLatestEdit,
  type ConversationIndex,
  type ConvRecord,
  type DedupKey,
  type Entry,
  type InboxKey,
  type InboxIndexState,
  type StoredOutcome,
  type TimelineStore,
} from '@seqline/core';
import { historyEntryFor, type HistoryCast, type HistoryOp } from '../conversation-history.ts';

export interface ConversationStores {
  timeline: TimelineStore;
  conversations: ConversationIndex;
}

/** One generated step: an op, the seq gap before it, and whether a new batch starts here. */
export type HistoryStep = [op: HistoryOp, gap: number, cut: boolean];

/** What the writer knows of one inbox: its entries (one per appinfo) and its head. */
export class InboxModel {
  readonly entries: Entry[] = [];
  /** Stored entries by dedup key, as every store dedups (core's dedupKeyOf). */
  private readonly byKey = new Map<DedupKey, Entry>();
  private head = 0;
  private n = 0;

  constructor(readonly cast: HistoryCast) {}

  get headSeq(): number {
    return this.head;
  }

  /**
   * Turns steps into batches of entries with seqs. A duplicate keeps a seq of its own (a
   * resend gets one from the allocator too); the store must answer it with the original's.
   */
  batches(steps: readonly HistoryStep[]): Array<{ entries: Entry[]; expected: StoredOutcome[] }> {
    const out: Array<{ entries: Entry[]; expected: StoredOutcome[] }> = [];
    let current: { entries: Entry[]; expected: StoredOutcome[] } | undefined;
    for (const [op, gap, cut] of steps) {
      const input = historyEntryFor(op, this.cast, this.entries, this.head, this.n++);
      if (input === null) continue;
      if (current === undefined || cut) {
        current = { entries: [], expected: [] };
        out.push(current);
      }
      const original = this.byKey.get(dedupKeyOf(input));
      if (original !== undefined) {
        current.entries.push({ ...input, seq: this.head + 1 + gap });
        current.expected.push({ seq: original.seq, duplicate: true, original });
        continue;
      }
      this.head += 1 + gap;
      const entry: Entry = { ...input, seq: this.head };
      this.entries.push(entry);
      this.byKey.set(dedupKeyOf(entry), entry);
      current.entries.push(entry);
      current.expected.push({ seq: entry.seq, duplicate: false });
    }
    return out;
  }
}

/** Appends each batch and checks the whole index against the recount after every one. */
export async function appendAndCheck(
  stores: ConversationStores,
  inbox: InboxKey,
  self: string,
  batches: ReadonlyArray<{ entries: Entry[]; expected: StoredOutcome[] }>,
  pageLimit: number,
): Promise<void> {
  for (const batch of batches) {
    expect(await stores.timeline.append({ inbox, entries: batch.entries })).toEqual(batch.expected);
    await expectIndexMatchesInbox(stores, inbox, self, pageLimit);
  }
}

const READ_ALL = 100_000;

/**
 * Every answer of the port equals the recount of the inbox: records with `last`, the list in
 * pages of `pageLimit`, each conversation's visible entries in pages, the watermark, hiddenSeqs.
 */
export async function expectIndexMatchesInbox(stores: ConversationStores, inbox: InboxKey, self: string, pageLimit: number): Promise<void> {
  const { timeline, conversations } = stores;
  const entries = await timeline.readAfter({ inbox, afterSeq: 0, limit: READ_ALL });
  const oracle = recountInboxIndex(entries, self);
  const bySeq = new Map(entries.map((e) => [e.seq, e]));
  const shown = (seq: number): Entry => withLatestEdit(bySeq.get(seq) as Entry, oracle.edits.get(seq) ?? null);

  for (const rec of oracle.records.values()) {
    const last = rec.lastMsgSeq === 0 ? null : shown(rec.lastMsgSeq);
    expect(await conversations.getConversation({ inbox, conv: rec.conv }), `record of ${conversationKey(rec.conv)}`).toEqual({
      ...rec,
      last,
    });
    const visible = visibleSeqsNewestFirst(oracle, rec);
    const paged = await pageEntries(conversations, inbox, rec, pageLimit);
    expect(paged, `visible entries of ${conversationKey(rec.conv)}`).toEqual(visible.map(shown));
  }

  const listed = await pageList(conversations, inbox, pageLimit);
  const expected = [...oracle.records.values()].sort((a, b) => b.lastSeq - a.lastSeq);
  expect(
    listed.map((c) => [conversationKey(c.conv), c.lastSeq]),
    'list order',
  ).toEqual(expected.map((r) => [conversationKey(r.conv), r.lastSeq]));
  for (const c of listed) expect(c).toEqual(await conversations.getConversation({ inbox, conv: c.conv }));
  for (const c of listed) expect(c.title, `title of ${conversationKey(c.conv)}`).toBe(newestGroupName(entries, conversationKey(c.conv)));

  expect(await conversations.headSeq(inbox), 'watermark').toBe(await timeline.headSeq(inbox));
  const hidden = entries.filter((e) => hiddenFromOwner(e, oracle.deleted.has(e.seq), oracle.records.get(conversationKey(e.conv)) ?? null));
  expect(sortedSeqs(await conversations.hiddenSeqs({ inbox, entries })), 'hiddenSeqs').toEqual(hidden.map((e) => e.seq));
}

/**
 * The title stated without the index's machinery: of a conversation's group notices (not
 * group.tier) that carry a name, the one with the highest nameRev (absent: 0), the later on a
 * tie, whatever was deleted or cleared since; none for a 1:1 chat.
 */
export function newestGroupName(entries: readonly Entry[], convKey: string): string | undefined {
  let best: { name: string; rev: number } | undefined;
  for (const e of entries) {
    if (e.kind !== 'group' || e.type === 'group.tier' || conversationKey(e.conv) !== convKey) continue;
    const body = e.body as { name?: unknown; nameRev?: unknown } | undefined;
    if (typeof body?.name !== 'string') continue;
    const rev = typeof body.nameRev === 'number' ? body.nameRev : 0;
    if (best === undefined || rev >= best.rev) best = { name: body.name, rev };
  }
  return best?.name;
}

function visibleSeqsNewestFirst(oracle: InboxIndexState, rec: ConvRecord): number[] {
  const prefix = `${conversationKey(rec.conv)}|`;
  const seqs: number[] = [];
  for (const item of oracle.visible) {
    if (!item.startsWith(prefix)) continue;
    const seq = Number(item.slice(prefix.length));
    if (seq > rec.clearedSeq) seqs.push(seq);
  }
  return seqs.sort((a, b) => b - a);
}

/** Pages through the conversation's entries by beforeSeq; each page holds at most `limit`. */
async function pageEntries(conversations: ConversationIndex, inbox: InboxKey, rec: ConvRecord, limit: number): Promise<Entry[]> {
  const all: Entry[] = [];
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await conversations.conversationEntries({
      inbox,
      conv: rec.conv,
      ...(beforeSeq === undefined ? { limit } : { limit, beforeSeq }),
    });
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    all.push(...page.entries);
    const oldest = page.entries[page.entries.length - 1];
    if (!page.hasMore) return all;
    expect(oldest, 'hasMore with an empty page').toBeDefined();
    beforeSeq = (oldest as Entry).seq;
  }
}

async function pageList(conversations: ConversationIndex, inbox: InboxKey, limit: number) {
  const all = [];
  let beforeLastSeq: number | undefined;
  for (;;) {
    const page = await conversations.listConversations({ inbox, ...(beforeLastSeq === undefined ? { limit } : { limit, beforeLastSeq }) });
    expect(page.convs.length).toBeLessThanOrEqual(limit);
    all.push(...page.convs);
    const oldest = page.convs[page.convs.length - 1];
    if (!page.hasMore) return all;
    expect(oldest, 'hasMore with an empty page').toBeDefined();
    beforeLastSeq = (oldest as ConvRecord).lastSeq;
  }
}

export function sortedSeqs(seqs: Iterable<number>): number[] {
  return [...seqs].sort((a, b) => a - b);
}

/** The timeline as it stood at `entries`' last seq (what the index should describe while it trails). */
export function truncatedTimeline(timeline: TimelineStore, entries: Entry[]): TimelineStore {
  const head = entries.at(-1)?.seq ?? 0;
  return {
    append: () => Promise.reject(new Error('read-only view')),
    findSeqs: (input) => timeline.findSeqs(input),
    getEntry: async ({ seq }) => entries.find((e) => e.seq === seq) ?? null,
    readAfter: async ({ afterSeq, limit }) => entries.filter((e) => e.seq > afterSeq).slice(0, limit),
    readBefore: async ({ beforeSeq, limit }) =>
      entries
        .filter((e) => e.seq < beforeSeq)
        .reverse()
        .slice(0, limit),
    headSeq: async () => head,
    addReaders: () => Promise.reject(new Error('read-only view')),
    getReaders: (input) => timeline.getReaders(input),
  };
}
