/**
 * TimelineStore contract. Decisions pinned here (every adapter must agree):
 * - receipt state (addReaders/getReaders) is kept apart from the entry: getEntry returns the
 *   entry exactly as appended, and getReaders starts empty even for an entry with `readBy`;
 * - addReaders on a seq that holds no entry rejects with NotFoundError.
 */
import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError, inboxKey, type Entry, type InboxKey, type Json, type TimelineStore } from '@seqline/core';
import { acrossReopen, msgEntry, msgKey, shuffled, uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';
import { seqLogTests } from './seq-log.contract.ts';
import type { PreviousLayoutWriter } from './seq-log-port.ts';

export interface TimelineContractOptions {
  /** Writes the previous version's dedup layout (keyed by plain appinfo): runs the upgrade cases. */
  previousLayout?: PreviousLayoutWriter<InboxKey>;
}

export function timelineStoreContract(name: string, open: StoreOpener<TimelineStore>, options: TimelineContractOptions = {}): void {
  describe(`TimelineStore contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const freshInbox = (): InboxKey => inboxKey(uniqueTenant(), 'alice');

    describe('append and read', () => {
      seqLogTests(ctx, {
        open,
        makeKey: inboxKey,
        append: (store, inbox, entries) => store.append({ inbox, entries }),
        find: (store, inbox, keys) => store.findSeqs({ inbox, keys }),
        readAfter: (store, inbox, afterSeq, limit) => store.readAfter({ inbox, afterSeq, limit }),
        readBefore: (store, inbox, beforeSeq, limit) => store.readBefore({ inbox, beforeSeq, limit }),
        previousLayout: options.previousLayout,
      });
    });

    describe('entries', () => {
      it('round-trips every field of every kind', async () => {
        const inbox = freshInbox();
        const entries = roundTripEntries();
        await ctx.store.append({ inbox, entries });
        expect(await ctx.store.readAfter({ inbox, afterSeq: 0, limit: 100 })).toEqual(entries);
        expect(await ctx.store.readBefore({ inbox, beforeSeq: 1000, limit: 100 })).toEqual([...entries].reverse());
        for (const entry of entries) expect(await ctx.store.getEntry({ inbox, seq: entry.seq })).toEqual(entry);
      });

      it('keeps hostile JSON exactly: "__proto__" keys, unpaired surrogates in bodies, edge numbers', async () => {
        const inbox = freshInbox();
        const entries = hostileEntries();
        await ctx.store.append({ inbox, entries });
        // Entry fields in any order; a body byte for byte as JSON text (key order included).
        const exact = (entry: Entry | null) => entry && { ...entry, body: JSON.stringify(entry.body) };
        const sent = entries.map(exact);
        const byGet = await Promise.all(entries.map((entry) => ctx.store.getEntry({ inbox, seq: entry.seq })));
        expect((await ctx.store.readAfter({ inbox, afterSeq: 0, limit: 100 })).map(exact)).toEqual(sent);
        expect((await ctx.store.readBefore({ inbox, beforeSeq: 1000, limit: 100 })).reverse().map(exact)).toEqual(sent);
        expect(byGet.map(exact)).toEqual(sent);
        const body = byGet[0]?.body as Record<string, unknown>;
        expect(Object.getPrototypeOf(body)).toBe(Object.prototype); // an own key, not a prototype
        expect(Object.keys(body)).toContain('__proto__');
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      });

      it('refuses an appinfo with an unpaired surrogate, stores nothing and finds no other appinfo by it', async () => {
        const inbox = freshInbox();
        await ctx.store.append({ inbox, entries: [msgEntry(1, 'a\uFFFD')] }); // what a UTF-8 store would turn 'a\uD800' into
        await expect(ctx.store.append({ inbox, entries: [msgEntry(2, 'a\uD800')] })).rejects.toBeInstanceOf(BadRequestError);
        expect(await ctx.store.findSeqs({ inbox, keys: [msgKey('a\uD800'), msgKey('a\uDC00')] })).toEqual(new Map());
        expect(await ctx.store.findSeqs({ inbox, keys: [msgKey('a\uFFFD')] })).toEqual(new Map([[msgKey('a\uFFFD'), 1]]));
        expect(await ctx.store.headSeq(inbox)).toBe(1);
      });

      it('getEntry is null for a missing seq and for another inbox', async () => {
        const inbox = freshInbox();
        await ctx.store.append({ inbox, entries: [msgEntry(3, 'x')] });
        expect(await ctx.store.getEntry({ inbox, seq: 2 })).toBeNull();
        expect(await ctx.store.getEntry({ inbox, seq: 4 })).toBeNull();
        expect(await ctx.store.getEntry({ inbox: freshInbox(), seq: 3 })).toBeNull();
      });
    });

    describe('readers', () => {
      it('addReaders merges into a sorted set and returns all readers', async () => {
        const inbox = freshInbox();
        await ctx.store.append({ inbox, entries: [msgEntry(1, 'a'), msgEntry(2, 'b')] });
        expect(await ctx.store.getReaders({ inbox, seq: 1 })).toEqual([]);
        expect(await ctx.store.addReaders({ inbox, seq: 1, readers: ['carol', 'bob'] })).toEqual(['bob', 'carol']);
        expect(await ctx.store.addReaders({ inbox, seq: 1, readers: ['bob', 'dave', 'dave'] })).toEqual(['bob', 'carol', 'dave']);
        expect(await ctx.store.addReaders({ inbox, seq: 1, readers: [] })).toEqual(['bob', 'carol', 'dave']);
        expect(await ctx.store.getReaders({ inbox, seq: 1 })).toEqual(['bob', 'carol', 'dave']);
        expect(await ctx.store.getReaders({ inbox, seq: 2 })).toEqual([]);
      });

      it('receipt state does not change the stored entry', async () => {
        const inbox = freshInbox();
        const receipt: Entry = { ...msgEntry(1, 'rc'), kind: 'receipt', referSeq: 1, readBy: ['zed'] };
        await ctx.store.append({ inbox, entries: [receipt] });
        expect(await ctx.store.getReaders({ inbox, seq: 1 })).toEqual([]);
        await ctx.store.addReaders({ inbox, seq: 1, readers: ['amy'] });
        expect(await ctx.store.getEntry({ inbox, seq: 1 })).toEqual(receipt);
      });

      it('addReaders on a missing entry rejects with NotFoundError', async () => {
        const inbox = freshInbox();
        await ctx.store.append({ inbox, entries: [msgEntry(1, 'a')] });
        await expect(ctx.store.addReaders({ inbox, seq: 2, readers: ['bob'] })).rejects.toBeInstanceOf(NotFoundError);
        expect(await ctx.store.getReaders({ inbox, seq: 2 })).toEqual([]);
      });

      it('concurrent addReaders for one entry end with the union (no lost update)', async () => {
        const inbox = freshInbox();
        await ctx.store.append({ inbox, entries: [msgEntry(1, 'a'), msgEntry(2, 'b')] });
        const readers = Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`);
        const results = await Promise.all(
          shuffled(readers).flatMap((reader) => [
            ctx.store.addReaders({ inbox, seq: 1, readers: [reader, 'common'] }).then((all) => ({ reader, all })),
            ctx.store.addReaders({ inbox, seq: 2, readers: [reader] }).then((all) => ({ reader, all })),
          ]),
        );
        for (const { reader, all } of results) {
          expect(all).toContain(reader);
          expect(all).toEqual([...all].sort());
        }
        expect(await ctx.store.getReaders({ inbox, seq: 1 })).toEqual([...readers, 'common'].sort());
        expect(await ctx.store.getReaders({ inbox, seq: 2 })).toEqual(readers);
      });

      it('readers survive a reopen', async () => {
        const inbox = freshInbox();
        await acrossReopen(
          open,
          async (store) => {
            await store.append({ inbox, entries: [msgEntry(1, 'a')] });
            await store.addReaders({ inbox, seq: 1, readers: ['x', 'y'] });
          },
          async (store) => {
            expect(await store.getReaders({ inbox, seq: 1 })).toEqual(['x', 'y']);
            expect(await store.addReaders({ inbox, seq: 1, readers: ['w'] })).toEqual(['w', 'x', 'y']);
          },
        );
      });
    });
  });
}

/** One entry of each kind, with every optional field and awkward JSON in bodies. */
function roundTripEntries(): Entry[] {
  return [
    {
      seq: 1,
      kind: 'msg',
      appinfo: '0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d',
      conv: { type: 'user', id: 'bob' },
      from: 'bob',
      sendTime: 1_700_000_000_123,
      type: 'text',
      body: {
        text: 'héllo 世界 🎉 \u0000 "quoted" \\ back',
        empty: '',
        n: -12.5,
        big: Number.MAX_SAFE_INTEGER,
        ok: true,
        no: false,
        nothing: null,
        list: [1, 'two', [3, { four: 4 }], []],
        nested: { a: { b: { c: ['deep'] } } },
      },
    },
    {
      seq: 2,
      kind: 'msg',
      appinfo: 'null-body',
      conv: { type: 'group', id: 'g1' },
      from: 'carol',
      sendTime: 1,
      type: 'custom',
      body: null,
    },
    {
      seq: 3,
      kind: 'msg',
      appinfo: 'array-body',
      conv: { type: 'user', id: 'bob' },
      from: 'alice',
      sendTime: 2,
      type: 'x',
      body: ['a', 1, false],
    },
    {
      seq: 5,
      kind: 'read',
      appinfo: 'read-1',
      conv: { type: 'user', id: 'bob' },
      from: 'alice',
      sendTime: 3,
      referSeq: 3,
      seqs: [1, 2, 3],
    },
    {
      seq: 6,
      kind: 'receipt',
      appinfo: 'receipt-1',
      conv: { type: 'user', id: 'bob' },
      from: 'bob',
      sendTime: 4,
      referSeq: 1,
      readBy: ['bob', 'carol'],
    },
    {
      seq: 7,
      kind: 'recall',
      appinfo: 'recall-1',
      conv: { type: 'user', id: 'bob' },
      from: 'bob',
      sendTime: 5,
      recall: { appinfo: '0192f0c1-7a1b-7cc3-9e55-5f0d6a1b2c3d', sendTime: 1_700_000_000_123 },
    },
    {
      seq: 8,
      kind: 'group',
      appinfo: 'group-1',
      conv: { type: 'group', id: 'g1' },
      from: 'carol',
      sendTime: 6,
      type: 'members.added',
      body: { users: ['alice', 'dave'], tier: 'small' },
    },
    { seq: 9, kind: 'tick', appinfo: 'tick-1', conv: { type: 'group', id: 'huge' }, from: 'system', sendTime: 7 },
    {
      seq: 10,
      kind: 'msg',
      appinfo: 'string-body-ü',
      conv: { type: 'user', id: 'd.e-f_g@h' },
      from: 'd.e-f_g@h',
      sendTime: 8,
      type: 'text',
      body: '纯文本',
    },
  ];
}

/**
 * Bodies an attacker may send (the wire refuses unpaired surrogates, a store still keeps them):
 * built by JSON.parse, so "__proto__" is an own key as it is in a parsed frame. -0 reads as 0.
 */
function hostileEntries(): Entry[] {
  const body = JSON.parse(String.raw`{
    "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "prototype": 1,
    "nested": [{"__proto__": null, "toString": "x", "hasOwnProperty": 0, "valueOf": {}}],
    "lone": "\ud800 x \udfff \udbff\ud800\udc00", "pair": "\ud83d\ude00", "\udc00key": {"\ud800": "\u0000"},
    "numbers": [-0, 0, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, 9007199254740993, 1e21, 0.1, -1e-7],
    "empty": {}, "": ""
  }`) as Json;
  const entry = (seq: number, type: string, body: Json): Entry => ({
    seq,
    kind: 'msg',
    appinfo: `hostile-${seq}`,
    conv: { type: 'user', id: 'bob' },
    from: 'bob',
    sendTime: seq,
    type,
    body,
  });
  return [entry(1, 't\udc00', body), entry(2, 'x', '\ud800'), entry(3, 'x', JSON.parse('[{"__proto__": []}]') as Json)];
}
