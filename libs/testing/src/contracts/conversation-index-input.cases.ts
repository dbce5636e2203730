/**
 * The ConversationIndex contract's bad input: limits and cursors out of range are refused typed,
 * and an entry the index cannot hold fails its whole append or is indexed — never half of it.
 * Called by conversationIndexContract.
 */
import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  CONVERSATION_HISTORY_MAX_LIMIT,
  CONVERSATIONS_MAX_LIMIT,
  SeqlineError,
  inboxKey,
  messageKey,
  type Entry,
  type InboxKey,
} from '@seqline/core';
import { historyMsg } from '../conversation-history.ts';
import { uniqueTenant } from './harness.ts';
import { expectIndexMatchesInbox, type ConversationStores } from './conversation-index.oracle.ts';

export function conversationIndexInputCases(ctx: { readonly store: ConversationStores }, self: string): void {
  const freshInbox = (): InboxKey => inboxKey(uniqueTenant(), self);

  describe('bad input', () => {
    it('refuses list and entry limits out of range, and a beforeLastSeq that is not a seq', async () => {
      const inbox = freshInbox();
      const conv = { type: 'user', id: 'bob' } as const;
      await ctx.store.timeline.append({ inbox, entries: [{ ...historyMsg('m1', conv, 'bob'), seq: 1 }] });
      for (const limit of [0, -1, 1.5, Number.NaN, CONVERSATIONS_MAX_LIMIT + 1]) {
        await expect(ctx.store.conversations.listConversations({ inbox, limit }), `limit ${limit}`).rejects.toBeInstanceOf(BadRequestError);
      }
      for (const beforeLastSeq of [0, -3, 2.5]) {
        await expect(ctx.store.conversations.listConversations({ inbox, limit: 5, beforeLastSeq })).rejects.toBeInstanceOf(BadRequestError);
      }
      for (const limit of [0, -1, 0.5, CONVERSATION_HISTORY_MAX_LIMIT + 1]) {
        await expect(ctx.store.conversations.conversationEntries({ inbox, conv, limit })).rejects.toBeInstanceOf(BadRequestError);
      }
      for (const beforeSeq of [0, -1, 1.5]) {
        await expect(ctx.store.conversations.conversationEntries({ inbox, conv, limit: 5, beforeSeq })).rejects.toBeInstanceOf(
          BadRequestError,
        );
      }
      expect(await ctx.store.conversations.listConversations({ inbox, limit: CONVERSATIONS_MAX_LIMIT })).toMatchObject({
        hasMore: false,
      });
      await expectIndexMatchesInbox(ctx.store, inbox, self, 1);
    });

    it('an entry the index cannot hold fails its whole append, or is indexed: inbox and index never disagree', async () => {
      const inbox = freshInbox();
      const bob = { type: 'user', id: 'bob' } as const;
      await ctx.store.timeline.append({ inbox, entries: [{ ...historyMsg('m1', bob, 'bob'), seq: 1 }] });
      const before = await snapshot(ctx.store, inbox);
      // Conversation ids no edge lets through (ID_PATTERN), as a buggy writer could still hand them over.
      const hostile = [
        { type: 'user', id: 'x'.repeat(4000) },
        { type: 'group', id: 'a\uD800b' },
        { type: 'user', id: 'a:b|c' },
      ] as const;
      let head = 1;
      for (const conv of hostile) {
        const batch: Entry[] = [
          { ...historyMsg(`ok-${head}`, bob, 'bob'), seq: head + 1 },
          { ...historyMsg(`bad-${head}`, conv, 'bob'), seq: head + 2 },
        ];
        const outcome = await ctx.store.timeline.append({ inbox, entries: batch }).then(
          () => 'stored' as const,
          (error: unknown) => error,
        );
        if (outcome === 'stored') {
          head += 2;
        } else {
          expect(outcome, 'a refusal is a typed error').toBeInstanceOf(SeqlineError);
          expect(await ctx.store.timeline.headSeq(inbox), 'nothing of the batch stored').toBe(head);
          expect(await ctx.store.timeline.findSeqs({ inbox, keys: [messageKey('bob', `ok-${head}`)] })).toEqual(new Map());
          if (head === 1) expect(await snapshot(ctx.store, inbox)).toEqual(before);
        }
        await expectIndexMatchesInbox(ctx.store, inbox, self, 2);
      }
    });
  });
}

/** Everything the port says about an inbox, to compare before and after. */
export async function snapshot(stores: ConversationStores, inbox: InboxKey) {
  const list = await stores.conversations.listConversations({ inbox, limit: CONVERSATIONS_MAX_LIMIT });
  const entries = await Promise.all(list.convs.map((c) => stores.conversations.conversationEntries({ inbox, conv: c.conv, limit: 1000 })));
  return {
    list,
    entries,
    head: await stores.conversations.headSeq(inbox),
    inbox: await stores.timeline.readAfter({ inbox, afterSeq: 0, limit: 100_000 }),
  };
}
