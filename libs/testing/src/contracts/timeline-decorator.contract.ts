/**
 * The contract of a TimelineWriter decorator (a cache, a fence): whatever it adds, an append
 * reaches the store it wraps with everything its caller gave — the entries, a guard that still
 * runs the caller's, every listener, and any field the decorator does not know (it forwards the
 * input whole, `{ ...input, guard }`) — and the caller hears each listener once, when the
 * wrapped store tells it: `durable` before that store's later work (its conversation index
 * write) is done, not after; `indexed` with the states it computed. A decorator that drops a
 * field fails here, whichever field it is.
 */
import { describe, expect, it } from 'vitest';
import {
  inboxKey,
  type AppendOutcome,
  type Entry,
  type IndexedConversations,
  type InboxKey,
  type StoredOutcome,
  type TimelineAppend,
  type TimelineStore,
  type TimelineWriter,
  type WriteGuard,
  type EntryReaders,
} from '@seqline/core';
import { msgEntry, uniqueTenant } from './harness.ts';

/**
 * The store under the decorator: appends are recorded, run the guard they got, tell `durable`,
 * then wait for `later` (a store's index write), then tell `indexed` — as the CQL store does.
 * Reads answer as an empty store.
 */
export class ListeningTimeline implements TimelineStore {
  /** Each append's input as this store received it. */
  readonly received: TimelineAppend[] = [];
  /** Held open by a test to see what the caller heard while the wrapped store still works. */
  later: Promise<void> = Promise.resolve();
  /** Tell the listeners at all (false: a store without an index, whose entries are durable on resolve). */
  tells = true;

  async append(input: TimelineAppend): Promise<StoredOutcome[]> {
    this.received.push(input);
    input.guard?.();
    const outcomes = input.entries.map((e) => ({ seq: e.seq, duplicate: false as const }));
    if (this.tells) input.durable?.(outcomes);
    await this.later;
    if (this.tells) input.indexed?.(indexedOf(input.entries));
    return outcomes;
  }

  findSeqs(): ReturnType<TimelineStore['findSeqs']> {
    return Promise.resolve(new Map());
  }
  async getEntry(): Promise<Entry | null> {
    return null;
  }
  async readAfter(): Promise<Entry[]> {
    return [];
  }
  async readBefore(): Promise<Entry[]> {
    return [];
  }
  async headSeq(): Promise<number> {
    return 0;
  }
  async addReaders({ readers }: EntryReaders): Promise<string[]> {
    return [...readers].sort();
  }
  async getReaders(): Promise<string[]> {
    return [];
  }
}

/** What a store with an index would tell of `entries` (their own conversations, `last` each). */
export function indexedOf(entries: readonly Entry[]): IndexedConversations {
  const last = entries.at(-1);
  return {
    watermark: last?.seq ?? 0,
    states: entries.map((e) => ({
      conv: e.conv,
      lastSeq: e.seq,
      lastMsgSeq: e.seq,
      readSeq: 0,
      clearedSeq: 0,
      unread: 1,
      mentions: 0,
      asOfSeq: e.seq,
      last: e,
    })),
  };
}

export interface DecoratorRig {
  /** The decorator under test, wrapping `inner` (a write decorator wraps the writing half only). */
  store: TimelineWriter;
  close(): Promise<void>;
}

export function timelineDecoratorContract(name: string, decorate: (inner: ListeningTimeline) => Promise<DecoratorRig>): void {
  describe(`TimelineWriter decorator contract: ${name}`, () => {
    const freshInbox = (): InboxKey => inboxKey(uniqueTenant(), 'alice');

    it('hands the entries, a guard running the caller one, and every listener to the store it wraps', async () => {
      const inner = new ListeningTimeline();
      const rig = await decorate(inner);
      try {
        const inbox = freshInbox();
        const entries = [msgEntry(1, 'a'), msgEntry(2, 'b')];
        let guarded = 0;
        const guard: WriteGuard = Object.assign(() => void guarded++, { term: 'caller-term' });
        const durable: AppendOutcome[][] = [];
        const indexed: IndexedConversations[] = [];
        const outcomes = await rig.store.append({
          inbox,
          entries,
          guard,
          durable: (o) => durable.push(o),
          indexed: (i) => indexed.push(i),
        });
        expect(outcomes).toEqual([
          { seq: 1, duplicate: false },
          { seq: 2, duplicate: false },
        ]);
        const [got] = inner.received;
        expect(inner.received).toHaveLength(1);
        expect(got?.inbox).toBe(inbox);
        expect(got?.entries).toEqual(entries);
        expect(guarded).toBe(1); // the wrapped store's guard call ran the caller's
        expect(got?.guard?.term ?? '').toContain('caller-term');
        expect(typeof got?.durable).toBe('function');
        expect(typeof got?.indexed).toBe('function');
        expect(durable).toEqual([outcomes]);
        expect(indexed).toEqual([indexedOf(entries)]);
      } finally {
        await rig.close();
      }
    });

    it('forwards the input whole: a field the decorator does not know reaches the store it wraps', async () => {
      const inner = new ListeningTimeline();
      const rig = await decorate(inner);
      try {
        // A field a later version of the port may add (a trace id, say): no decorator lists it.
        const input = { inbox: freshInbox(), entries: [msgEntry(1, 'a')], durable: () => undefined, traceId: 'trace-7' };
        await rig.store.append(input);
        expect(inner.received).toHaveLength(1);
        expect(inner.received[0]).toMatchObject({ inbox: input.inbox, entries: input.entries, traceId: 'trace-7' });
      } finally {
        await rig.close();
      }
    });

    it('tells each listener once, when the wrapped store tells it: durable before its later work is done', async () => {
      const inner = new ListeningTimeline();
      const rig = await decorate(inner);
      try {
        let release: () => void = () => undefined;
        inner.later = new Promise((resolve) => (release = resolve));
        const durable: AppendOutcome[][] = [];
        const indexed: IndexedConversations[] = [];
        const appending = rig.store.append({
          inbox: freshInbox(),
          entries: [msgEntry(1, 'a')],
          durable: (o) => durable.push(o),
          indexed: (i) => indexed.push(i),
        });
        await waitUntil(() => durable.length > 0);
        expect(durable).toEqual([[{ seq: 1, duplicate: false }]]);
        expect(indexed).toEqual([]);
        release();
        await appending;
        expect(durable).toHaveLength(1);
        expect(indexed).toHaveLength(1);
      } finally {
        await rig.close();
      }
    });

    it('a wrapped store that tells nothing: indexed is not told, durable at most once', async () => {
      const inner = new ListeningTimeline();
      inner.tells = false;
      const rig = await decorate(inner);
      try {
        const durable: AppendOutcome[][] = [];
        const indexed: IndexedConversations[] = [];
        const outcomes = await rig.store.append({
          inbox: freshInbox(),
          entries: [msgEntry(1, 'a')],
          durable: (o) => durable.push(o),
          indexed: (i) => indexed.push(i),
        });
        expect(durable.length).toBeLessThanOrEqual(1);
        for (const told of durable) expect(told).toEqual(outcomes);
        expect(indexed).toEqual([]);
      } finally {
        await rig.close();
      }
    });
  });
}

/** Polls `done` (the wrapped store tells on its own schedule), 5 s at most. */
async function waitUntil(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('the caller was never told');
    await new Promise((r) => setTimeout(r, 2));
  }
}
