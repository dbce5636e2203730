/**
 * A small in-memory adapter of core's conversation index for tests: an inbox (array + maps, dedup
 * by appinfo like the stores), side tables in Maps, facts answered from them the way a store
 * would (point reads and short ranges), changes persisted after each entry. It checks what an
 * adapter relies on: `before` is the stored record, removed unread rows exist, added ones do not.
 * Entries come from the history builders of this package (../src/conversation-history.ts).
 */
import { expect } from 'vitest';
import {
  changesAtHorizon,
  conversationItemKey,
  conversationKey,
  dedupKeyOf,
  expireConversations,
  indexEntrySync,
  recountInboxIndex,
  unreadMayLieBelow,
  withLatestEdit,
} from '@seqline/core';
import type {
  ConversationExpiry,
  DedupKey,
  ConvRecord,
  ConversationChanges,
  ConversationFacts,
  EditRef,
  Entry,
  FactsRequest,
  InboxIndexState,
  NewEntry,
  UnreadItem,
} from '@seqline/core';

export class InMemoryConversationIndex {
  readonly entries: Entry[] = [];
  readonly records = new Map<string, ConvRecord>();
  readonly unread = new Map<string, UnreadItem>();
  readonly visible = new Map<string, Set<number>>();
  readonly deleted = new Set<number>();
  readonly edits = new Map<number, EditRef>();
  /** Lookup rounds each applied entry needed. */
  readonly rounds: number[] = [];
  private readonly bySeq = new Map<number, Entry>();
  private readonly byKey = new Map<DedupKey, Entry>();
  private head = 0;
  /** Entries below it expired; the index is at it (core's expireConversations). */
  private horizon = 0;

  constructor(readonly self: string) {}

  /** Appends like a store (a known appinfo is a duplicate: nothing happens) and indexes the entry. */
  append(input: NewEntry, gap = 0): Entry | null {
    if (this.byKey.has(dedupKeyOf(input))) return null;
    this.head += 1 + gap;
    const entry: Entry = { ...input, seq: this.head };
    this.entries.push(entry);
    this.bySeq.set(entry.seq, entry);
    this.byKey.set(dedupKeyOf(entry), entry);
    let rounds = 0;
    const changes = indexEntrySync(entry, this.self, (need, facts) => {
      rounds++;
      this.answer(need, facts);
    });
    this.rounds.push(rounds);
    this.persist(changesAtHorizon(changes, this.horizon));
    return entry;
  }

  /**
   * The entries below `horizon` expire, as a TTL drops them (oldest first; their dedup keys go
   * with them), and the index moves to it like a store's owner moves it: records and unread rows
   * by core's expireConversations. Visible, deleted and edit rows below it stay, as a store's stay
   * until their own TTL: stateAbove leaves them out, and no fact is asked of them (a `last` that
   * falls back below the horizon is cleared with the record: changesAtHorizon).
   */
  expire(horizon: number): ConversationExpiry {
    this.horizon = Math.max(this.horizon, horizon);
    for (const e of this.entries.filter((x) => x.seq < horizon)) {
      this.bySeq.delete(e.seq);
      if (this.byKey.get(dedupKeyOf(e)) === e) this.byKey.delete(dedupKeyOf(e));
    }
    this.entries.splice(0, this.entries.length, ...this.entries.filter((x) => x.seq >= horizon));
    const unreadBelow = new Map<string, UnreadItem[]>();
    for (const [key, rec] of this.records) {
      if (unreadMayLieBelow(rec, horizon)) {
        unreadBelow.set(
          key,
          [...this.unread.values()].filter((i) => i.convKey === key && i.seq < horizon),
        );
      }
    }
    const expiry = expireConversations({ horizon, records: [...this.records.values()], unreadBelow });
    for (const rec of expiry.dropped) {
      const key = conversationKeyOf(rec);
      this.records.delete(key);
      for (const [itemKey, item] of this.unread) if (item.convKey === key) this.unread.delete(itemKey);
    }
    this.persist({
      seq: this.head,
      records: expiry.records,
      unreadAdd: [],
      unreadRemove: expiry.unreadRemove,
      visibleAdd: [],
      visibleRemove: [],
      deleted: [],
      edits: [],
    });
    return expiry;
  }

  /** The index as its readers see it: rows below the horizon left out. */
  stateAbove(): InboxIndexState {
    const s = this.state();
    const above = <T>(m: Map<number, T>) => new Map([...m].filter(([seq]) => seq >= this.horizon));
    return {
      records: s.records,
      unread: s.unread,
      visible: new Set([...s.visible].filter((item) => Number(item.slice(item.lastIndexOf('|') + 1)) >= this.horizon)),
      deleted: new Set([...s.deleted].filter((seq) => seq >= this.horizon)),
      edits: above(s.edits),
    };
  }

  get headSeq(): number {
    return this.head;
  }

  entryAt(seq: number): Entry | undefined {
    return this.bySeq.get(seq);
  }

  /** The conversation's `last` as an adapter would read it. */
  lastOf(convKey: string): Entry | null {
    const rec = this.records.get(convKey);
    if (rec === undefined || rec.lastMsgSeq === 0) return null;
    const e = this.bySeq.get(rec.lastMsgSeq) as Entry;
    return withLatestEdit(e, this.edits.get(e.seq) ?? null);
  }

  /** The same shape as recountInboxIndex, for comparison. */
  state(): InboxIndexState {
    const visible = new Set<string>();
    for (const [convKey, seqs] of this.visible) for (const seq of seqs) visible.add(conversationItemKey(convKey, seq));
    return { records: this.records, unread: this.unread, visible, deleted: this.deleted, edits: this.edits };
  }

  /** Asserts the incrementally kept index equals a recount of the inbox. */
  expectNoDrift(): void {
    expect(sortedState(this.state())).toEqual(sortedState(recountInboxIndex(this.entries, this.self)));
  }

  private answer(need: FactsRequest, facts: ConversationFacts): void {
    for (const key of need.convKeys) facts.records.set(key, this.records.get(key) ?? null);
    for (const k of need.keys) facts.byKey.set(k, this.byKey.get(k) ?? null);
    for (const s of need.seqs) facts.bySeq.set(s, this.bySeq.get(s) ?? null);
    for (const s of need.edits) facts.edits.set(s, this.edits.get(s) ?? null);
    for (const { convKey, upToSeq } of need.unreadUpTo) {
      facts.unreadUpTo.set(
        convKey,
        [...this.unread.values()].filter((i) => i.convKey === convKey && i.seq <= upToSeq),
      );
    }
    for (const { convKey, seq } of need.unreadAt) {
      const key = conversationItemKey(convKey, seq);
      facts.unreadAt.set(key, this.unread.get(key) ?? null);
    }
    for (const { convKey, excluding } of need.newestVisible) {
      const seqs = [...(this.visible.get(convKey) ?? [])].filter((s) => !excluding.includes(s));
      facts.newestVisible.set(convKey, seqs.length === 0 ? null : Math.max(...seqs));
    }
  }

  private persist(ch: ConversationChanges): void {
    for (const { before, after } of ch.records) {
      expect(before).toEqual(this.records.get(conversationKeyOf(after)) ?? null);
      this.records.set(conversationKeyOf(after), after);
    }
    for (const item of ch.unreadRemove) {
      expect(this.unread.delete(conversationItemKey(item.convKey, item.seq)), `unread row ${item.convKey}@${item.seq} exists`).toBe(true);
    }
    for (const item of ch.unreadAdd) {
      const key = conversationItemKey(item.convKey, item.seq);
      expect(this.unread.has(key)).toBe(false);
      this.unread.set(key, item);
    }
    for (const { convKey, seq } of ch.visibleRemove) this.visible.get(convKey)?.delete(seq);
    for (const { convKey, seq } of ch.visibleAdd) {
      const set = this.visible.get(convKey) ?? new Set<number>();
      set.add(seq);
      this.visible.set(convKey, set);
    }
    for (const seq of ch.deleted) this.deleted.add(seq);
    for (const { seq, edit } of ch.edits) this.edits.set(seq, edit);
  }
}

function conversationKeyOf(rec: ConvRecord): string {
  return conversationKey(rec.conv);
}

/** Plain sorted arrays: equality that does not depend on insertion order. */
export function sortedState(s: InboxIndexState) {
  const byKey = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    records: byKey(s.records),
    unread: byKey(s.unread),
    visible: [...s.visible].sort(),
    deleted: [...s.deleted].sort((a, b) => a - b),
    edits: [...s.edits.entries()].sort(([a], [b]) => a - b),
  };
}

/** An index for case-by-case tests: `add` appends and checks the index against a recount. */
export function indexUnderTest(me: string) {
  const ix = new InMemoryConversationIndex(me);
  const add = (e: Parameters<InMemoryConversationIndex['append']>[0]): Entry => {
    const out = ix.append(e);
    if (out === null) throw new Error(`duplicate ${e.appinfo}`);
    ix.expectNoDrift();
    return out;
  };
  const rec = (key: string) => ix.records.get(key);
  return { ix, add, rec };
}
