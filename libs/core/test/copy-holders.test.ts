/**
 * The one rule of who holds a copy of a message (copy-holders.ts): what a send's fanout makes
 * is what a recall or an edit reaches, and what the stream side of the conversation list
 * leaves to the inbox copy.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  copyHolders,
  holdersBesides,
  holdsStreamCopy,
  mentionCopyRecipients,
  MENTION_ALL,
  writeFanoutSnapshot,
  type Conv,
  type MessageRoute,
} from '../src/index.ts';

const users = fc.constantFrom('ann', 'ben', 'cat', 'dan', MENTION_ALL);
const message = fc.record({
  from: fc.constantFrom('ann', 'ben', 'cat'),
  conv: fc.oneof(
    fc.record({ type: fc.constant('user' as const), id: fc.constantFrom('ann', 'ben', 'dan') }),
    fc.constant<Conv>({ type: 'group', id: 'g' }),
  ),
  mentions: fc.option(fc.uniqueArray(users, { maxLength: 4 }), { nil: undefined }),
});
const route: fc.Arbitrary<MessageRoute> = fc.oneof(
  fc.constant({ way: 'direct' as const }),
  fc.constant({ way: 'stream' as const }),
  fc.record({ way: fc.constant('inboxes' as const), recipients: fc.uniqueArray(users, { maxLength: 4 }) }),
);

describe('copy holders', () => {
  it('the sender first, everyone once; besides the actor, never the actor', () => {
    fc.assert(
      fc.property(message, route, fc.constantFrom('ann', 'ben', 'dan'), (m, r, actor) => {
        const holders = copyHolders(m, r);
        expect(holders[0]).toBe(m.from);
        expect(new Set(holders).size).toBe(holders.length);
        expect(holdersBesides(m, r, actor)).toEqual(holders.filter((u) => u !== actor));
      }),
    );
  });

  it('a stream message: the holders are its sender and the members it names, as the stream side of the list leaves them', () => {
    fc.assert(
      fc.property(message, fc.constantFrom('ann', 'ben', 'cat', 'dan', MENTION_ALL), (m, user) => {
        expect(copyHolders(m, { way: 'stream' }).includes(user)).toBe(holdsStreamCopy(m, user));
        expect(copyHolders(m, { way: 'stream' })).toEqual([m.from, ...mentionCopyRecipients(m)]);
      }),
    );
  });

  it('mention copies go to the members named, never to @all, never to the sender', () => {
    expect(mentionCopyRecipients({ from: 'ann', mentions: ['ben', MENTION_ALL, 'ann', 'ben', 'cat'] })).toEqual(['ben', 'cat']);
    expect(mentionCopyRecipients({ from: 'ann' })).toEqual([]);
  });

  it('a write-fanout send: its snapshot, and nobody who joined after; 1:1: the peer; a note to self: the sender', () => {
    const snapshot = writeFanoutSnapshot(['carol', 'alice', 'bob', 'bob'], 'alice');
    expect(snapshot).toEqual(['bob', 'carol']);
    const m1 = { from: 'alice', conv: { type: 'group' as const, id: 'g' } };
    expect(copyHolders(m1, { way: 'inboxes', recipients: snapshot })).toEqual(['alice', 'bob', 'carol']);
    expect(holdersBesides(m1, { way: 'inboxes', recipients: snapshot }, 'bob')).toEqual(['alice', 'carol']);
    expect(copyHolders(m1, { way: 'inboxes', recipients: [] })).toEqual(['alice']);
    expect(copyHolders({ from: 'alice', conv: { type: 'user', id: 'bob' } }, { way: 'direct' })).toEqual(['alice', 'bob']);
    expect(holdersBesides({ from: 'alice', conv: { type: 'user', id: 'alice' } }, { way: 'direct' }, 'alice')).toEqual([]);
  });
});
