/**
 * A small in-memory adapter of the conversation index for tests: an inbox (array + maps, dedup
 * by appinfo like the stores), side tables in Maps, facts answered from them the way a store
 * would (point reads and short ranges), changes persisted after each entry. It checks what an
 * adapter relies on: `before` is the stored record, removed unread rows exist, added ones do not.
 */
import { expect } from 'vitest';
import {
  buildClearEntry,
  buildConversationReadEntry,
  buildDeleteEntry,
  buildEditEntry,
  buildGroupEventEntry,
  buildMessageCopy,
  buildRecallEntry,
  conversationItemKey,
  conversationKey,
  dedupKeyOf,
  indexEntrySync,
  recountInboxIndex,
  withLatestEdit,
} from '../src/index.ts';
import type {
  Conv,
  DedupKey,
  ConvRecord,
  ConversationChanges,
  ConversationFacts,
  EditRef,
  Entry,
  FactsRequest,
  InboxIndexState,
  Json,
  NewEntry,
  UnreadItem,
} from '../src/index.ts';

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
    this.persist(changes);
    return entry;
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

// ---------------------------------------------------------------- entry builders (self's inbox)

export const T0 = 1_763_700_000_000;

export function msg(appinfo: string, conv: Conv, from: string, mentions?: string[], body: Json = { text: appinfo }): NewEntry {
  const e = buildMessageCopy({ appinfo, conv, from, sendTime: T0, type: 'text', body });
  if (mentions !== undefined) e.mentions = mentions;
  return e;
}

export function groupEvent(
  appinfo: string,
  group: string,
  event: 'create' | 'add' | 'remove' | 'rename' | 'tier',
  actor: string,
  named: { name?: string; nameRev?: number } = {},
): NewEntry {
  return buildGroupEventEntry({ appinfo, group, event, actor, time: T0, ...named });
}

export function readConv(appinfo: string, self: string, conv: Conv, upToSeq: number): NewEntry {
  return buildConversationReadEntry(self, conv, upToSeq, T0, appinfo);
}

export function readSeqs(appinfo: string, self: string, seqs: number[]): NewEntry {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  return {
    kind: 'read',
    appinfo,
    conv: { type: 'user', id: self },
    from: self,
    sendTime: T0,
    referSeq: sorted[sorted.length - 1] ?? 0,
    seqs: sorted,
  };
}

export function recallOf(target: Entry, by: string): NewEntry {
  return buildRecallEntry(target, by, T0 + 1);
}

export function editOf(target: Entry, by: string, editedAt: number, text: string): NewEntry {
  return buildEditEntry(by, target, { type: 'text', body: { text } }, editedAt, `edit:${target.appinfo}:${editedAt}:${text}`);
}

export function deleteOf(appinfo: string, self: string, seqs: number[]): NewEntry {
  return buildDeleteEntry(self, seqs, T0, appinfo);
}

export function clearOf(appinfo: string, self: string, conv: Conv, upToSeq?: number): NewEntry {
  return buildClearEntry(self, conv, upToSeq, T0, appinfo);
}
