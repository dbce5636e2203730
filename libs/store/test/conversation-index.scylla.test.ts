/**
 * The ConversationIndex contract over CQL (a scratch keyspace on the real cluster), plus what
 * only the CQL adapter has to get right: the index is written by the owner after the entries,
 * so it can trail them (a crash, a failed index write, a deposed owner) but never run ahead,
 * and whoever appends next — a new owner after a takeover included — catches it up to the
 * recount of the inbox. And one entry's changes are one batch, however many rows they are.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedError, inboxKey, silentLogger, type AppendOutcome, type Entry, type InboxKey, type WriteGuard } from '@seqline/core';
import {
  appendAndCheck,
  conversationIndexContract,
  expectIndexMatchesInbox,
  InboxModel,
  truncatedTimeline,
  type HistoryStep,
  defaultCast,
  historyDeleteOf,
  historyMsg,
  historyOpArb,
  historyReadConv,
  uniqueTenant,
  type ClockedOpener,
  type ConversationStores,
  type StoreOpener,
} from '@seqline/testing';
import { migrateSchema, type ScyllaStores } from '@seqline/store/scylla';
import { Cql } from '../src/scylla/cql.ts';
import { CqlTimelineStore } from '../src/scylla/timeline.ts';
import { newClient, openTestStores, requireOrSkip, scratchKeyspace, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();
const SELF = 'me';
const CAST = defaultCast(SELF);
const historyArb = fc.array(
  fc.tuple(
    historyOpArb(CAST),
    fc.nat({ max: 2 }),
    fc.nat({ max: 4 }).map((n) => n === 0),
  ),
  {
    minLength: 1,
    maxLength: 30,
    size: 'max',
  },
) as fc.Arbitrary<HistoryStep[]>;

if (requireOrSkip(probe, 'conversation index on CQL')) {
  const keyspace = scratchKeyspace('conv_index');
  const raw = newClient();
  beforeAll(() => migrateSchema(raw, { keyspace }), 120_000);
  afterAll(async () => {
    await raw.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await raw.shutdown();
  }, 60_000);

  const opener: StoreOpener<ConversationStores> = async () => {
    const stores = await openTestStores({ keyspace });
    return { store: { timeline: stores.timeline, conversations: stores.conversations }, close: () => stores.close() };
  };
  const openWithClock: ClockedOpener = async (_dataKey, clock) => {
    const stores = await openTestStores({ keyspace, clock });
    return { store: { timeline: stores.timeline, conversations: stores.conversations }, close: () => stores.close() };
  };
  conversationIndexContract('CQL', opener, { numRuns: 15, reopenRuns: 4, openWithClock });

  describe('conversation index on CQL: behind the entries, never ahead', () => {
    let owner: ScyllaStores;
    let successor: ScyllaStores;
    /** Writes entries like an owner that crashed before indexing them: the same tables, no index. */
    let crashed: CqlTimelineStore;
    beforeAll(async () => {
      [owner, successor] = await Promise.all([openTestStores({ keyspace }), openTestStores({ keyspace })]);
      crashed = new CqlTimelineStore(new Cql(owner.client, keyspace), silentLogger, { indexConversations: false });
    });
    afterAll(() => Promise.all([owner.close(), successor.close()]));

    const freshInbox = (): InboxKey => inboxKey(uniqueTenant(), SELF);
    const stores = (s: ScyllaStores): ConversationStores => ({ timeline: s.timeline, conversations: s.conversations });

    /** While the index trails: every answer is the recount of the inbox up to the watermark. */
    async function expectExactAtWatermark(inbox: InboxKey, watermark: number): Promise<void> {
      expect(await owner.conversations.headSeq(inbox)).toBe(watermark);
      expect(await successor.conversations.headSeq(inbox)).toBe(watermark);
      const upTo = await owner.timeline.readAfter({ inbox, afterSeq: 0, limit: 100_000 });
      const view = truncatedTimeline(
        owner.timeline,
        upTo.filter((e) => e.seq <= watermark),
      );
      await expectIndexMatchesInbox({ timeline: view, conversations: owner.conversations }, inbox, SELF, 3);
    }

    it('a crash between entries and index: readers see the old watermark, the next owner catches up to the recount', async () => {
      await fc.assert(
        fc.asyncProperty(historyArb, historyArb, historyArb, async (before, lost, after) => {
          const inbox = freshInbox();
          const model = new InboxModel(CAST);
          await appendAndCheck(stores(owner), inbox, SELF, model.batches(before), 3);
          const watermark = await owner.timeline.headSeq(inbox);
          for (const batch of model.batches(lost)) expect(await crashed.append({ inbox, entries: batch.entries })).toEqual(batch.expected);
          await expectExactAtWatermark(inbox, watermark);
          // The takeover: another process, with its own (empty) memory of the inbox, appends next.
          await appendAndCheck(stores(successor), inbox, SELF, model.batches(after), 3);
        }),
        { numRuns: 8 },
      );
    }, 180_000);

    it('an index write refused by the guard (owner deposed after its entries) keeps the append; the next one catches up', async () => {
      const inbox = freshInbox();
      const bob = { type: 'user', id: 'bob' } as const;
      await owner.timeline.append({ inbox, entries: [{ ...historyMsg('m1', bob, 'bob', [SELF]), seq: 1 }] });
      let deposed = false;
      const guard: WriteGuard = Object.assign(
        () => {
          if (deposed) throw new FencedError('lease lost');
        },
        { term: 'shard-1@1' },
      );
      const entries: Entry[] = [
        { ...historyMsg('m2', bob, 'bob'), seq: 2 },
        { ...historyReadConv('r3', SELF, bob, 1), seq: 3 },
      ];
      // `durable` is told once the entries are stored, before the index is written: depose there.
      // The index write is then refused, so `indexed` is never told.
      let indexedTold = false;
      const outcomes = await owner.timeline.append({
        inbox,
        entries,
        guard,
        durable: () => {
          deposed = true;
        },
        indexed: () => {
          indexedTold = true;
        },
      });
      expect(indexedTold).toBe(false);
      expect(outcomes).toEqual<AppendOutcome[]>([
        { seq: 2, duplicate: false },
        { seq: 3, duplicate: false },
      ]);
      expect(await owner.timeline.readAfter({ inbox, afterSeq: 0, limit: 10 })).toHaveLength(3);
      await expectExactAtWatermark(inbox, 1);
      // The successor (a new term) appends next and indexes 2, 3 and its own entry.
      const next = { ...historyMsg('m4', bob, SELF), seq: 10_004 };
      await successor.timeline.append({ inbox, entries: [next], guard: Object.assign(() => undefined, { term: 'shard-1@2' }) });
      await expectIndexMatchesInbox(stores(successor), inbox, SELF, 2);
      expect(await successor.conversations.getConversation({ inbox, conv: bob })).toMatchObject({
        unread: 0,
        readSeq: 10_004,
        lastSeq: 10_004,
      });
    });

    it('a resend is the first append after a crash: the next owner catches up though nothing new is stored', async () => {
      const [inbox, bob] = [freshInbox(), { type: 'user', id: 'bob' } as const];
      const m1 = { ...historyMsg('m1', bob, 'bob', [SELF]), seq: 1 };
      await owner.timeline.append({ inbox, entries: [m1] });
      await crashed.append({ inbox, entries: [{ ...historyReadConv('r2', SELF, bob, 1), seq: 2 }] });
      await expectExactAtWatermark(inbox, 1);
      const resent = await successor.timeline.append({
        inbox,
        entries: [{ ...m1, seq: 10_003 }],
        guard: Object.assign(() => undefined, { term: 's@2' }),
      });
      expect(resent).toEqual<AppendOutcome[]>([{ seq: 1, duplicate: true, original: m1 }]);
      await expectIndexMatchesInbox(stores(successor), inbox, SELF, 2);
      expect(await successor.conversations.getConversation({ inbox, conv: bob })).toMatchObject({ unread: 0, readSeq: 1, asOfSeq: 2 });
    });

    it('a writer whose lease comes back under a new term does not trust what it remembered of the watermark', async () => {
      const inbox = freshInbox();
      const bob = { type: 'user', id: 'bob' } as const;
      const term = (t: string): WriteGuard => Object.assign(() => undefined, { term: t });
      await owner.timeline.append({ inbox, entries: [{ ...historyMsg('a1', bob, 'bob'), seq: 1 }], guard: term('s@1') });
      await successor.timeline.append({ inbox, entries: [{ ...historyMsg('a2', bob, 'bob'), seq: 10_002 }], guard: term('s@2') });
      await owner.timeline.append({ inbox, entries: [{ ...historyMsg('a3', bob, 'bob'), seq: 20_003 }], guard: term('s@3') });
      await expectIndexMatchesInbox(stores(owner), inbox, SELF, 2);
      expect(await owner.conversations.getConversation({ inbox, conv: bob })).toMatchObject({ unread: 3, asOfSeq: 20_003 });
    });

    it('one entry with thousands of row changes is one batch: a read of 3000 unread, a delete of 1000 seqs', async () => {
      const inbox = freshInbox();
      const group = { type: 'group', id: 'big' } as const;
      const messages: Entry[] = Array.from({ length: 3000 }, (_, i) => ({ ...historyMsg(`g${i}`, group, 'bob', [SELF]), seq: i + 1 }));
      for (let i = 0; i < messages.length; i += 500) await owner.timeline.append({ inbox, entries: messages.slice(i, i + 500) });
      expect(await owner.conversations.getConversation({ inbox, conv: group })).toMatchObject({ unread: 3000, mentions: 3000 });
      const seqs = Array.from({ length: 1000 }, (_, i) => 2 * i + 1);
      await owner.timeline.append({ inbox, entries: [{ ...historyDeleteOf('del', SELF, seqs), seq: 3001 }] });
      expect(await owner.conversations.getConversation({ inbox, conv: group })).toMatchObject({ unread: 2000, mentions: 2000 });
      await owner.timeline.append({ inbox, entries: [{ ...historyReadConv('read', SELF, group, 2999), seq: 3002 }] });
      expect(await owner.conversations.getConversation({ inbox, conv: group })).toMatchObject({
        unread: 1,
        readSeq: 2999,
        lastMsgSeq: 3000,
      });
      await expectIndexMatchesInbox(stores(owner), inbox, SELF, 500);
    }, 120_000);
  });
}
