/**
 * Core's InboxRecount (a store's rebuild of an inbox too big to hold) a page at a time equals
 * the recount of the whole inbox, whatever the page size: each page is folded with only the
 * entries its targetsOf asked for (as a store reads them), then the same pages are counted.
 * The histories are the ones the ConversationIndex contract appends to every store, with
 * burnt seqs between entries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  conversationItemKey,
  dedupKeyOf,
  InboxRecount,
  recountInboxIndex,
  type DedupKey,
  type Entry,
  type InboxIndexState,
  type UnreadItem,
} from '@seqline/core';
import { defaultCast, historyEntryFor, historyOpArb, type HistoryOp } from '../src/index.ts';
import { sortedState } from './in-memory-conversation-index.ts';

const ME = 'me';
const CAST = defaultCast(ME);

/** An inbox as a store keeps it: a known dedup key is not stored again; `gap` seqs burnt before each entry. */
function inboxOf(ops: ReadonlyArray<readonly [HistoryOp, number]>): Entry[] {
  const entries: Entry[] = [];
  const keys = new Set<DedupKey>();
  let head = 0;
  ops.forEach(([op, gap], n) => {
    const e = historyEntryFor(op, CAST, entries, head, n);
    if (e === null || keys.has(dedupKeyOf(e))) return;
    head += 1 + gap;
    keys.add(dedupKeyOf(e));
    entries.push({ ...e, seq: head });
  });
  return entries;
}

/** The recount a page of `size` entries at a time, the targets answered as a store answers them. */
function pagedRecount(entries: readonly Entry[], size: number): { state: InboxIndexState; asked: number } {
  const bySeq = new Map(entries.map((e) => [e.seq, e]));
  const firstByKey = new Map<DedupKey, Entry>();
  for (const e of entries) if (!firstByKey.has(dedupKeyOf(e))) firstByKey.set(dedupKeyOf(e), e);
  const pages: Entry[][] = [];
  for (let i = 0; i < entries.length; i += size) pages.push(entries.slice(i, i + size));
  const recount = new InboxRecount(ME);
  let asked = 0;
  for (const page of pages) {
    const targets = recount.targetsOf(page);
    asked += targets.seqs.length + targets.keys.length;
    const found = {
      bySeq: new Map(targets.seqs.flatMap((seq) => (bySeq.has(seq) ? [[seq, bySeq.get(seq) as Entry] as const] : []))),
      byKey: new Map(targets.keys.flatMap((key) => (firstByKey.has(key) ? [[key, firstByKey.get(key) as Entry] as const] : []))),
    };
    recount.foldCursors(page, found);
  }
  const unread = new Map<string, UnreadItem>();
  const visible = new Set<string>();
  for (const page of pages) {
    const items = recount.countItems(page);
    for (const item of items.unread) unread.set(conversationItemKey(item.convKey, item.seq), item);
    for (const key of items.visible) visible.add(key);
  }
  return { state: { ...recount.counted(), unread, visible }, asked };
}

describe('conversation recount a page at a time', () => {
  it('equals the recount of the whole inbox, for any page size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(historyOpArb(CAST), fc.nat({ max: 2 })), { maxLength: 80, size: 'max' }),
        fc.integer({ min: 1, max: 9 }),
        (ops, size) => {
          const entries = inboxOf(ops);
          expect(sortedState(pagedRecount(entries, size).state)).toEqual(sortedState(recountInboxIndex(entries, ME)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('asks only for what control entries name: an inbox of messages needs no lookup', () => {
    const entries = inboxOf(Array.from({ length: 30 }, (_, i) => [{ t: 'send', conv: i % 3, from: i, mentions: undefined }, 0] as const));
    expect(entries).toHaveLength(30);
    expect(pagedRecount(entries, 4).asked).toBe(0);
  });

  it('refuses pages out of order, and a page folded once counting began', () => {
    const entries = inboxOf(Array.from({ length: 6 }, (_, i) => [{ t: 'send', conv: 0, from: i, mentions: undefined }, 0] as const));
    const none = { bySeq: new Map(), byKey: new Map() };
    const recount = new InboxRecount(ME);
    recount.foldCursors(entries.slice(3, 5), none);
    expect(() => recount.foldCursors(entries.slice(0, 3), none)).toThrow(/after seq/);
    recount.countItems(entries.slice(3, 5));
    expect(() => recount.foldCursors(entries.slice(5), none)).toThrow(/counting began/);
  });
});
