/**
 * ConversationIndex contract: whatever an adapter stores, every answer equals core's
 * recount of the inbox it was derived from, after every append. Decisions pinned here:
 * - the index is written with the entries: right after an append resolves it is exact at the
 *   inbox head (headSeq = TimelineStore.headSeq), duplicates change nothing;
 * - limits out of range are BadRequestError (core's limit helpers), never clamped;
 * - an unknown conversation is null / no entries, never an error;
 * - an append the index cannot take fails as a whole: inbox and index never disagree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONVERSATIONS_MAX_LIMIT,
  conversationKey,
  inboxKey,
  type ConversationState,
  type Entry,
  type IndexedConversations,
  type InboxKey,
} from '@seqline/core';
import {
  defaultCast,
  historyDeleteOf,
  historyEditOf,
  historyMsg,
  historyOpArb,
  historyReadConv,
  historyRecallOf,
  type HistoryCast,
} from '../conversation-history.ts';
import { acrossReopen, dup, uniqueTenant, useSharedStore, type StoreOpener } from './harness.ts';
import {
  appendAndCheck,
  expectIndexMatchesInbox,
  InboxModel,
  type ConversationStores,
  type HistoryStep,
} from './conversation-index.oracle.ts';
import { conversationIndexClockCases, type ClockedOpener } from './conversation-index-clocks.ts';
import { conversationIndexInputCases, snapshot } from './conversation-index-input.cases.ts';

export type { ConversationStores } from './conversation-index.oracle.ts';

export interface ConversationIndexContractOptions {
  /** fast-check runs of the main property (each up to 60 entries); default 25. */
  numRuns?: number;
  /** Runs of the property with a reopen in the middle; default 6. */
  reopenRuns?: number;
  /** Opens a writer with its own wall clock (conversation-index-clocks.ts); default `open`, the clock unused. */
  openWithClock?: ClockedOpener;
}

const SELF = 'me';
const CAST: HistoryCast = defaultCast(SELF);
const stepArb = fc.tuple(
  historyOpArb(CAST),
  fc.nat({ max: 2 }),
  fc.nat({ max: 4 }).map((n) => n === 0),
);
/** Up to 60 steps; a cut starts a new batch (average batch ~5 entries, duplicates included). */
const historyArb = fc.array(stepArb, { minLength: 1, maxLength: 60, size: 'max' }) as fc.Arbitrary<HistoryStep[]>;
const pageLimitArb = fc.integer({ min: 1, max: 4 });

export function conversationIndexContract(
  name: string,
  open: StoreOpener<ConversationStores>,
  options: ConversationIndexContractOptions = {},
): void {
  const numRuns = options.numRuns ?? 25;
  const reopenRuns = options.reopenRuns ?? 6;

  describe(`ConversationIndex contract: ${name}`, () => {
    const ctx = useSharedStore(open);
    const freshInbox = (): InboxKey => inboxKey(uniqueTenant(), SELF);
    conversationIndexClockCases(options.openWithClock ?? ((dataKey) => open(dataKey)), SELF);

    describe('no drift from the inbox', () => {
      it('equals a recount of the inbox after every append of a random history', async () => {
        await fc.assert(
          fc.asyncProperty(historyArb, pageLimitArb, async (steps, pageLimit) => {
            const model = new InboxModel(CAST);
            await appendAndCheck(ctx.store, freshInbox(), SELF, model.batches(steps), pageLimit);
          }),
          { numRuns },
        );
      }, 120_000);

      it('continues across a close and reopen in the middle of a history', async () => {
        await fc.assert(
          fc.asyncProperty(historyArb, historyArb, pageLimitArb, async (first, second, pageLimit) => {
            const model = new InboxModel(CAST);
            const inbox = freshInbox();
            await acrossReopen(
              open,
              (stores) => appendAndCheck(stores, inbox, SELF, model.batches(first), pageLimit),
              async (stores) => {
                await expectIndexMatchesInbox(stores, inbox, SELF, pageLimit);
                await appendAndCheck(stores, inbox, SELF, model.batches(second), pageLimit);
              },
            );
          }),
          { numRuns: reopenRuns },
        );
      }, 120_000);

      it('continues an inbox that already holds a long history, one entry per append', async () => {
        const inbox = freshInbox();
        const model = new InboxModel(CAST);
        const [past, ...rest] = fc.sample(historyArb, { numRuns: 4, seed: 26 });
        // The past in one append (one transaction), then single-entry appends on top of it.
        const pastBatches = model.batches((past ?? []).map(([op, gap]) => [op, gap, false]));
        await appendAndCheck(ctx.store, inbox, SELF, pastBatches, 3);
        const singles = model.batches(rest.flat().map(([op, gap]) => [op, gap, true]));
        await appendAndCheck(ctx.store, inbox, SELF, singles, 2);
      }, 60_000);

      it('a replayed batch is all duplicates and changes nothing', async () => {
        const inbox = freshInbox();
        const model = new InboxModel(CAST);
        const [steps] = fc.sample(historyArb, { numRuns: 1, seed: 7 });
        const batches = model.batches((steps ?? []).map(([op, gap]) => [op, gap, false]));
        await appendAndCheck(ctx.store, inbox, SELF, batches, 5);
        const before = await snapshot(ctx.store, inbox);
        for (const batch of batches) {
          const outcomes = await ctx.store.timeline.append({ inbox, entries: batch.entries });
          // Every entry is now a duplicate of its original (an entry that was one already names its original).
          expect(outcomes).toEqual(batch.expected.map((o, i) => (o.duplicate ? o : dup(batch.entries[i] as Entry))));
        }
        expect(await snapshot(ctx.store, inbox)).toEqual(before);
      });
    });

    describe('the states an append tells (TimelineAppend.indexed)', () => {
      it('are the index as the append left it: every changed conversation, exact at the watermark, `last` as shown', async () => {
        await fc.assert(
          fc.asyncProperty(historyArb, async (steps) => {
            const model = new InboxModel(CAST);
            const inbox = freshInbox();
            for (const batch of model.batches(steps)) {
              const before = await recordsOf(ctx.store, inbox);
              const told: IndexedConversations[] = [];
              await ctx.store.timeline.append({ inbox, entries: batch.entries, indexed: (i) => told.push(i) });
              const fresh = batch.expected.filter((o) => !o.duplicate);
              if (fresh.length === 0) {
                expect(told, 'an append of duplicates tells nothing').toEqual([]);
                continue;
              }
              expect(told).toHaveLength(1);
              const indexed = told[0] as IndexedConversations;
              expect(indexed.watermark).toBe(fresh.at(-1)?.seq);
              expect(await ctx.store.conversations.headSeq(inbox)).toBe(indexed.watermark);
              const after = await recordsOf(ctx.store, inbox);
              for (const state of indexed.states) {
                const held = after.get(conversationKey(state.conv));
                // `last` may be left out (the writer did not hold that entry); when given it is the one shown.
                expect(state.last === undefined ? { ...held, last: undefined } : held, conversationKey(state.conv)).toEqual(
                  state.last === undefined ? { ...state, last: undefined } : state,
                );
              }
              const toldKeys = new Set(indexed.states.map((s) => conversationKey(s.conv)));
              for (const [key, held] of after) {
                if (JSON.stringify(before.get(key)) !== JSON.stringify(held)) expect(toldKeys, `changed ${key} told`).toContain(key);
              }
            }
          }),
          { numRuns: Math.max(1, Math.ceil(numRuns / 2)) },
        );
      }, 120_000);
    });

    describe('reads', () => {
      it('an inbox or conversation without activity is empty, not an error', async () => {
        const inbox = freshInbox();
        const conv = { type: 'user', id: 'nobody' } as const;
        expect(await ctx.store.conversations.listConversations({ inbox, limit: 10 })).toEqual({ convs: [], hasMore: false });
        expect(await ctx.store.conversations.getConversation({ inbox, conv })).toBeNull();
        expect(await ctx.store.conversations.conversationEntries({ inbox, conv, limit: 10 })).toEqual({ entries: [], hasMore: false });
        expect(await ctx.store.conversations.headSeq(inbox)).toBe(0);
        expect(await ctx.store.conversations.hiddenSeqs({ inbox, entries: [] })).toEqual(new Set());
        // A read or clear of a conversation with no activity creates nothing; the watermark still moves.
        await ctx.store.timeline.append({ inbox, entries: [{ ...historyReadConv('r1', SELF, conv, 5), seq: 1 }] });
        expect(await ctx.store.conversations.getConversation({ inbox, conv })).toBeNull();
        expect(await ctx.store.conversations.headSeq(inbox)).toBe(1);
      });

      it('shows the sender-only latest edit in last and entries; a forged edit changes nothing', async () => {
        const inbox = freshInbox();
        const bob = { type: 'user', id: 'bob' } as const;
        const sent: Entry = { ...historyMsg('m1', bob, 'bob'), seq: 1 };
        const edited: Entry = { ...historyEditOf(sent, 'bob', 10, 'fixed'), seq: 2 };
        const forged: Entry = { ...historyEditOf(sent, SELF, 20, 'forged'), seq: 3 };
        await ctx.store.timeline.append({ inbox, entries: [sent] });
        await ctx.store.timeline.append({ inbox, entries: [edited, forged] });
        const conv = await ctx.store.conversations.getConversation({ inbox, conv: bob });
        expect(conv?.last?.body).toEqual({ text: 'fixed' });
        expect(conv?.last?.edit?.editedAt).toBe(10);
        const { entries } = await ctx.store.conversations.conversationEntries({ inbox, conv: bob, limit: 5 });
        expect(entries.map((e) => e.body)).toEqual([{ text: 'fixed' }]);
        expect(await ctx.store.timeline.getEntry({ inbox, seq: 1 })).toEqual(sent); // the inbox keeps what was sent
        await expectIndexMatchesInbox(ctx.store, inbox, SELF, 2);
      });

      it('one append that recalls and deletes the newest messages of a conversation moves last past both', async () => {
        const inbox = freshInbox();
        const bob = { type: 'user', id: 'bob' } as const;
        const sent = [1, 2, 3].map((seq): Entry => ({ ...historyMsg(`m${seq}`, bob, 'bob'), seq }));
        await ctx.store.timeline.append({ inbox, entries: sent });
        const [, second, third] = sent as [Entry, Entry, Entry];
        await ctx.store.timeline.append({
          inbox,
          entries: [
            { ...historyRecallOf(third, 'bob'), seq: 4 },
            { ...historyDeleteOf('d1', SELF, [second.seq]), seq: 5 },
          ],
        });
        const conv = await ctx.store.conversations.getConversation({ inbox, conv: bob });
        expect(conv).toMatchObject({ lastSeq: 3, lastMsgSeq: 1, unread: 1, asOfSeq: 5 });
        expect(conv?.last?.appinfo).toBe('m1');
        await expectIndexMatchesInbox(ctx.store, inbox, SELF, 1);
      });
    });

    conversationIndexInputCases(ctx, SELF);
  });
}

/** Every conversation of the inbox as the index holds it, by key. */
async function recordsOf(stores: ConversationStores, inbox: InboxKey): Promise<Map<string, ConversationState>> {
  const list = await stores.conversations.listConversations({ inbox, limit: CONVERSATIONS_MAX_LIMIT });
  return new Map(list.convs.map((c) => [conversationKey(c.conv), c]));
}
