/**
 * The client's conversation list, alone: it holds only server states, newest activity first; a
 * state exact at an older inbox seq never replaces a newer one, whatever order answers arrive in;
 * `conversations` fires only on a change; delete / clear / edit entries become events; a push
 * without states is refreshed from sync only when the server speaks v1.1.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClientEvents } from '../src/client-options.ts';
import { ConversationSync } from '../src/conversation-sync.ts';
import { ConversationStore, SeqlineClientError, type Conv, type Conversation, type Entry, type OpName } from '../src/index.ts';

const bob: Conv = { type: 'user', id: 'bob' };
const team: Conv = { type: 'group', id: 'team' };

function state(conv: Conv, asOfSeq: number, over: Partial<Conversation> = {}): Conversation {
  return { conv, lastSeq: asOfSeq, last: null, readSeq: 0, unread: asOfSeq, mentions: 0, clearedSeq: 0, asOfSeq, ...over };
}

function entry(seq: number, over: Partial<Entry> = {}): Entry {
  return { seq, kind: 'msg', appinfo: `a${seq}`, conv: bob, from: 'bob', sendTime: seq, ...over };
}

/** A ConversationSync whose requests are answered by `answer` and whose events are recorded. */
function rig(answer: (op: OpName, args: unknown) => unknown = () => ({})) {
  const events: Array<{ event: keyof ClientEvents; arg: unknown }> = [];
  const requests: Array<{ op: OpName; args: unknown }> = [];
  const sync = new ConversationSync({
    request: async (op, args) => {
      requests.push({ op, args });
      return answer(op, args) as never;
    },
    emit: async (event, arg) => {
      events.push({ event, arg });
    },
    track: true,
  });
  return { sync, events, requests, lists: () => events.filter((e) => e.event === 'conversations').map((e) => e.arg as Conversation[]) };
}

describe('ConversationStore', () => {
  it('lists newest activity first (by lastSeq), whatever order the states came in', () => {
    const store = new ConversationStore();
    store.apply([state(bob, 5), state(team, 9), state({ type: 'user', id: 'carol' }, 7)]);
    expect(store.list().map((c) => c.conv.id)).toEqual(['team', 'carol', 'bob']);
    store.apply([state(bob, 12)]);
    expect(store.list().map((c) => c.conv.id)).toEqual(['bob', 'team', 'carol']);
  });

  it('keeps, for each conversation, the state with the highest asOfSeq, under any arrival order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(bob, team), fc.integer({ min: 1, max: 50 })), { maxLength: 40 }), (arrivals) => {
        const store = new ConversationStore();
        for (const [conv, asOf] of arrivals) store.apply([state(conv, asOf, { unread: asOf * 10 })]);
        for (const conv of [bob, team]) {
          const newest = Math.max(0, ...arrivals.filter(([c]) => c === conv).map(([, a]) => a));
          expect(store.get(conv)?.unread ?? 0).toBe(newest * 10);
        }
      }),
    );
  });

  it('an older state does not replace a newer one; the same state twice is no change', () => {
    const store = new ConversationStore();
    expect(store.apply([state(bob, 10, { unread: 3 })])).toBe(true);
    expect(store.apply([state(bob, 9, { unread: 7 })])).toBe(false);
    expect(store.apply([state(bob, 10, { unread: 3 })])).toBe(false);
    expect(store.get(bob)?.unread).toBe(3);
    expect(store.apply([state(bob, 11, { unread: 0, readSeq: 10 })])).toBe(true);
    expect(store.get(bob)).toMatchObject({ unread: 0, readSeq: 10, asOfSeq: 11 });
  });

  it('a read-fanout group at the same asOfSeq moves forward in gseq terms only', () => {
    const store = new ConversationStore();
    store.apply([state(team, 4, { lastSeq: 0, lastGseq: 20, readGseq: 10, unread: 10 })]);
    expect(store.apply([state(team, 4, { lastSeq: 0, lastGseq: 20, readGseq: 15, unread: 5 })])).toBe(true);
    expect(store.apply([state(team, 4, { lastSeq: 0, lastGseq: 20, readGseq: 12, unread: 8 })])).toBe(false);
    expect(store.get(team)?.unread).toBe(5);
  });

  it('keeps no `messages`: only `conversations` pages carry them, and they are returned to the caller', () => {
    const store = new ConversationStore();
    store.apply([state(bob, 3, { messages: [entry(3)] })]);
    expect(store.get(bob)).not.toHaveProperty('messages');
  });
});

describe('ConversationSync', () => {
  it('emits `conversations` with the whole sorted list, only when something changed', async () => {
    const { sync, lists } = rig();
    await sync.apply([state(bob, 2)]);
    await sync.apply([state(bob, 1)]); // older: dropped, no event
    await sync.apply([state(team, 5)]);
    expect(lists().map((l) => l.map((c) => `${c.conv.id}@${c.asOfSeq}`))).toEqual([['bob@2'], ['team@5', 'bob@2']]);
  });

  it('turns delete, clear and edit entries into hidden / edited events; other kinds into none', async () => {
    const { sync, events } = rig();
    const edit = { appinfo: 'a1', sendTime: 1, type: 'text', body: { text: 'fixed' }, editedAt: 9 };
    await sync.entries([
      entry(1),
      entry(2, { kind: 'delete', seqs: [1] }),
      entry(3, { kind: 'clear', conv: team, upToSeq: 2 }),
      entry(4, { kind: 'edit', edit }),
      entry(5, { kind: 'receipt', referSeq: 1 }),
    ]);
    expect(events).toEqual([
      { event: 'hidden', arg: { by: 'delete', seq: 2, seqs: [1] } },
      { event: 'hidden', arg: { by: 'clear', seq: 3, conv: team, upToSeq: 2 } },
      { event: 'edited', arg: { seq: 4, conv: bob, from: 'bob', edit } },
    ]);
  });

  it("takes a push's own states; without them asks sync over the pushed range, once the server has shown it tracks", async () => {
    const { sync, requests, lists } = rig((op) =>
      op === 'sync' ? { entries: [], headSeq: 8, hasMore: false, groups: [], convs: [state(bob, 8)] } : {},
    );
    await sync.push({ kind: 'push', prevSeq: 6, entries: [entry(7)] });
    expect(requests).toEqual([]); // no states seen yet: a v1 server, nothing to refresh
    await sync.apply([]); // a v1.1 sync page (convs: [])
    await sync.push({ kind: 'push', prevSeq: 5, entries: [entry(6, { kind: 'receipt' })] });
    expect(requests).toEqual([]); // receipts touch no conversation
    await sync.push({ kind: 'push', prevSeq: 7, entries: [entry(8)] });
    expect(requests).toEqual([{ op: 'sync', args: { maxSeq: 7, limit: 1 } }]);
    await sync.push({ kind: 'push', prevSeq: 8, entries: [entry(9)], convs: [state(bob, 9)] });
    expect(requests).toHaveLength(1);
    expect(lists().at(-1)?.[0]?.asOfSeq).toBe(9);
  });

  it('markRead reads up to the known lastSeq, refuses an unknown conversation without a request, acks a read-fanout group', async () => {
    const { sync, requests } = rig((op) => (op === 'read' ? { seq: 30 } : { cursor: 44 }));
    // The huge group has inbox-side activity too (its join notice): still acked by gseq.
    await sync.apply([state(bob, 12, { lastSeq: 11 }), state(team, 13, { lastSeq: 7, lastGseq: 44, readGseq: 40 })]);
    expect(await sync.markRead(bob)).toEqual({ seq: 30 });
    expect(await sync.markRead(bob, 9)).toEqual({ seq: 30 });
    expect(await sync.markRead(team)).toEqual({ cursor: 44 });
    const err = await sync.markRead({ type: 'user', id: 'nobody' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeqlineClientError);
    expect((err as SeqlineClientError).code).toBe('BAD_REQUEST');
    expect(requests).toEqual([
      { op: 'read', args: { conv: bob, upToSeq: 11 } },
      { op: 'read', args: { conv: bob, upToSeq: 9 } },
      { op: 'group.ack', args: { group: 'team', gseq: 44 } },
    ]);
  });
});
