/**
 * Core's two-step conversation index API (what facts an entry needs, then applying it), through
 * the in-memory adapter of conversation-index.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  InternalError,
  applyToConversations,
  conversationFactsNeeded,
  emptyFacts,
  messageKey,
  recountConversations,
  type Conv,
  type Entry,
} from '@seqline/core';
import {
  historyClearOf,
  historyDeleteOf,
  historyEditOf,
  historyMsg,
  historyReadConv,
  historyReadSeqs,
  historyRecallOf,
} from '../src/index.ts';
import { indexUnderTest } from './in-memory-conversation-index.ts';

const ME = 'me';
const BOB: Conv = { type: 'user', id: 'bob' };

describe('conversation index: the two-step API', () => {
  it('a message, read or clear needs one round of lookups; recall, edit, delete, v1 read two', () => {
    const { add, ix } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    add(historyReadConv('read:1', ME, BOB, a1.seq));
    add(historyClearOf('clear:1', ME, BOB));
    add(historyRecallOf(a1, 'bob'));
    add(historyEditOf(a1, 'bob', 1, 'x'));
    add(historyDeleteOf('delete:1', ME, [a1.seq]));
    add(historyReadSeqs('read:2', ME, [a1.seq]));
    expect(ix.rounds).toEqual([1, 1, 1, 2, 2, 2, 2]);
  });

  it('an entry that touches nothing needs no lookup', () => {
    const receipt: Entry = {
      seq: 3,
      kind: 'receipt',
      appinfo: 'receipt:1:1',
      conv: BOB,
      from: 'system',
      sendTime: 0,
      referSeq: 1,
      readBy: ['bob'],
    };
    expect(conversationFactsNeeded(receipt, emptyFacts(), ME)).toBeNull();
    expect(applyToConversations(receipt, emptyFacts(), ME).records).toEqual([]);
  });

  it('refuses to apply without the facts, or to apply an entry twice', () => {
    const { ix } = indexUnderTest(ME);
    const e = ix.append(historyMsg('a1', BOB, 'bob')) as Entry;
    expect(() => applyToConversations({ ...e, seq: 9 }, emptyFacts(), ME)).toThrow(InternalError);
    const facts = emptyFacts();
    facts.records.set('user:bob', ix.records.get('user:bob') ?? null);
    facts.unreadUpTo.set('user:bob', []);
    expect(() => applyToConversations(e, facts, ME)).toThrow(InternalError);
  });

  it('ignores targets at or after the entry itself (same batch, later seq)', () => {
    const later: Entry = { seq: 10, kind: 'msg', appinfo: 'a9', conv: BOB, from: 'bob', sendTime: 0 };
    const recall: Entry = {
      seq: 5,
      kind: 'recall',
      appinfo: 'recall:a9',
      conv: BOB,
      from: 'bob',
      sendTime: 0,
      recall: { appinfo: 'a9', sendTime: 0 },
    };
    const facts = emptyFacts();
    facts.byKey.set(messageKey('bob', 'a9'), later);
    facts.records.set('user:bob', null); // the recall names it (asked whatever its target)
    expect(conversationFactsNeeded(recall, facts, ME)).toBeNull();
    expect(applyToConversations(recall, facts, ME).records).toEqual([]);
    expect(recountConversations([recall, later], ME).get('user:bob')?.unread).toBe(1);
  });

  it('a v1 read or a delete naming a later seq neither asks for it nor applies it', () => {
    const read: Entry = { ...historyReadSeqs('read:1', ME, [10]), seq: 5 };
    const del: Entry = { ...historyDeleteOf('delete:1', ME, [5, 10]), seq: 5 };
    const later: Entry = { seq: 10, kind: 'msg', appinfo: 'a9', conv: BOB, from: 'bob', sendTime: 0 };
    for (const e of [read, del]) {
      const facts = emptyFacts();
      facts.bySeq.set(5, e);
      facts.bySeq.set(10, later);
      expect(conversationFactsNeeded(e, emptyFacts(), ME)).toBeNull();
      expect(applyToConversations(e, facts, ME)).toMatchObject({ records: [], deleted: [], unreadRemove: [] });
      expect(recountConversations([e, later], ME).get('user:bob')).toMatchObject({ unread: 1, readSeq: 0, lastMsgSeq: 10 });
    }
  });
});
