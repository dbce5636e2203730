import { describe, expect, it } from 'vitest';
import {
  conversationTouch,
  BadRequestError,
  CONVERSATIONS_DEFAULT_LIMIT,
  CONVERSATIONS_MAX_LIMIT,
  ENTRY_KINDS,
  LAST_MESSAGES_MAX,
  checkConversationsArgs,
  checkDeleteSeqs,
  checkMentions,
  checkUpToSeq,
  conversationKey,
  countsAsUnread,
  editWins,
  emptyConvRecord,
  groupTitleOf,
  titleWins,
  hiddenFromOwner,
  isActivity,
  mentionsUser,
  nextClearedSeq,
  nextReadSeq,
  readsOnSend,
  withLatestEdit,
} from '../src/index.ts';
import type { EditRef, Entry } from '../src/index.ts';

const base: Entry = {
  seq: 7,
  kind: 'msg',
  appinfo: 'a-1',
  conv: { type: 'group', id: 'g1' },
  from: 'bob',
  sendTime: 1,
  type: 'text',
  body: { text: 'hi' },
};
const edit = (editedAt: number): EditRef => ({ appinfo: 'a-1', sendTime: 1, type: 'md', body: { text: `v${editedAt}` }, editedAt });

describe('conversation rules', () => {
  it('knows the v1.1 entry kinds', () => {
    for (const k of ['edit', 'delete', 'clear'] as const) expect(ENTRY_KINDS).toContain(k);
  });

  it('keys conversations by type and id, unambiguously', () => {
    expect(conversationKey({ type: 'user', id: 'bob' })).toBe('user:bob');
    expect(conversationKey({ type: 'group', id: 'bob' })).toBe('group:bob');
  });

  it('activity: messages and group notices, not group.tier nor control entries', () => {
    expect(isActivity(base)).toBe(true);
    expect(isActivity({ ...base, kind: 'group', type: 'group.add' })).toBe(true);
    expect(isActivity({ ...base, kind: 'group', type: 'group.tier' })).toBe(false);
    for (const kind of ['read', 'receipt', 'recall', 'tick', 'edit', 'delete', 'clear'] as const) {
      expect(isActivity({ ...base, kind })).toBe(false);
    }
  });

  it("unread and mentions: messages from others only; @all and the user's id mention", () => {
    expect(countsAsUnread(base, 'me')).toBe(true);
    expect(countsAsUnread(base, 'bob')).toBe(false);
    expect(countsAsUnread({ ...base, kind: 'group' }, 'me')).toBe(false);
    expect(mentionsUser({ ...base, mentions: ['me'] }, 'me')).toBe(true);
    expect(mentionsUser({ ...base, mentions: ['@all'] }, 'me')).toBe(true);
    expect(mentionsUser({ ...base, mentions: ['carol'] }, 'me')).toBe(false);
    expect(mentionsUser(base, 'me')).toBe(false);
    expect(mentionsUser({ ...base, mentions: ['bob', '@all'] }, 'bob')).toBe(false); // own message
    expect(readsOnSend(base, 'bob')).toBe(true);
    expect(readsOnSend({ ...base, kind: 'group' }, 'bob')).toBe(false);
  });

  it('cursors never move back and never pass lastSeq', () => {
    const rec = { ...emptyConvRecord(base.conv), lastSeq: 10, readSeq: 4, clearedSeq: 3 };
    expect(nextReadSeq(rec, 2)).toBe(4);
    expect(nextReadSeq(rec, 8)).toBe(8);
    expect(nextReadSeq(rec, 99)).toBe(10);
    expect(nextClearedSeq(rec, undefined)).toBe(10);
    expect(nextClearedSeq(rec, 1)).toBe(3);
    expect(nextClearedSeq(rec, 99)).toBe(10);
  });

  it('the latest editedAt wins; a tie goes to the edit applied later', () => {
    expect(editWins(null, edit(1))).toBe(true);
    expect(editWins(edit(5), edit(4))).toBe(false);
    expect(editWins(edit(5), edit(5))).toBe(true);
  });

  it('shows a message with its edit, leaves other entries and unedited messages alone', () => {
    expect(withLatestEdit(base, null)).toBe(base);
    expect(withLatestEdit(base, edit(3))).toEqual({ ...base, type: 'md', body: { text: 'v3' }, edit: edit(3) });
    const group = { ...base, kind: 'group' as const };
    expect(withLatestEdit(group, edit(3))).toBe(group);
  });

  it('hides deleted entries and cleared activity from the owner, not control entries', () => {
    const rec = { ...emptyConvRecord(base.conv), lastSeq: 9, clearedSeq: 7 };
    expect(hiddenFromOwner(base, false, rec)).toBe(true);
    expect(hiddenFromOwner({ ...base, seq: 8 }, false, rec)).toBe(false);
    expect(hiddenFromOwner({ ...base, kind: 'recall' }, false, rec)).toBe(false);
    expect(hiddenFromOwner({ ...base, kind: 'recall' }, true, rec)).toBe(true);
    expect(hiddenFromOwner(base, false, null)).toBe(false);
  });
});

describe('conversation op limits', () => {
  it('conversations: defaults, bounds, and a typed error out of range', () => {
    expect(checkConversationsArgs({})).toEqual({ limit: CONVERSATIONS_DEFAULT_LIMIT, beforeLastSeq: undefined, lastMessages: 0 });
    expect(checkConversationsArgs({ limit: CONVERSATIONS_MAX_LIMIT, beforeLastSeq: 9, lastMessages: LAST_MESSAGES_MAX })).toEqual({
      limit: 500,
      beforeLastSeq: 9,
      lastMessages: 50,
    });
    for (const bad of [
      { limit: 0 },
      { limit: 501 },
      { limit: 1.5 },
      { limit: Number.NaN },
      { beforeLastSeq: 0 },
      { beforeLastSeq: -1 },
      { lastMessages: 51 },
      { lastMessages: -1 },
    ]) {
      expect(() => checkConversationsArgs(bad)).toThrow(BadRequestError);
    }
  });

  it('upToSeq, delete seqs and mentions', () => {
    expect(checkUpToSeq('read', 3)).toBe(3);
    for (const bad of [0, -1, 1.5, '3', null]) expect(() => checkUpToSeq('read', bad)).toThrow(BadRequestError);
    expect(checkDeleteSeqs([5, 2, 5])).toEqual([2, 5]);
    for (const bad of [[], [0], [1.5], ['1'], Array.from({ length: 1001 }, (_, i) => i + 1)]) {
      expect(() => checkDeleteSeqs(bad)).toThrow(BadRequestError);
    }
    expect(checkMentions(['bob', 'carol', 'bob'])).toEqual(['bob', 'carol']);
    expect(checkMentions(['@all', '@all'])).toEqual(['@all']);
    for (const bad of [[], ['@all', 'bob'], ['a:b'], [''], [7], Array.from({ length: 101 }, (_, i) => `u${i}`)]) {
      expect(() => checkMentions(bad)).toThrow(BadRequestError);
    }
  });
});

describe('conversationTouch', () => {
  const conv = { type: 'user' as const, id: 'bob' };
  const base = { appinfo: 'a', conv, from: 'me', sendTime: 1 };
  it('names its own conversation for activity, conversation reads, clears, recalls and edits; the named seqs of v1 reads and deletes', () => {
    expect(conversationTouch({ ...base, seq: 1, kind: 'msg', type: 'text', body: 'x' })).toEqual({ conv });
    expect(conversationTouch({ ...base, seq: 2, kind: 'read', upToSeq: 1 })).toEqual({ conv });
    expect(conversationTouch({ ...base, seq: 3, kind: 'clear', upToSeq: 1 })).toEqual({ conv });
    expect(conversationTouch({ ...base, seq: 4, kind: 'recall', recall: { appinfo: 'm', sendTime: 1 } })).toEqual({ conv });
    expect(conversationTouch({ ...base, seq: 5, kind: 'read', seqs: [1, 2], referSeq: 2 })).toEqual({ namedSeqs: [1, 2] });
    expect(conversationTouch({ ...base, seq: 6, kind: 'delete', seqs: [3] })).toEqual({ namedSeqs: [3] });
    expect(conversationTouch({ ...base, seq: 7, kind: 'receipt', referSeq: 1, readBy: ['bob'] })).toBeNull();
    expect(conversationTouch({ ...base, seq: 8, kind: 'tick' })).toBeNull();
  });
});

describe('group titles', () => {
  const notice = (body: unknown, type = 'group.rename'): Entry =>
    ({ seq: 3, kind: 'group', appinfo: 'group:g1:x', conv: { type: 'group', id: 'g1' }, from: 'bob', sendTime: 1, type, body }) as Entry;

  it('a notice names the group with its revision (absent: 0); anything else names nothing', () => {
    expect(groupTitleOf(notice({ name: 'crew', nameRev: 2 }))).toEqual({ name: 'crew', rev: 2 });
    expect(groupTitleOf(notice({ name: 'team' }, 'group.create'))).toEqual({ name: 'team', rev: 0 });
    for (const body of [
      {},
      { name: 7 },
      { name: 'x', nameRev: -1 },
      { name: 'x', nameRev: 1.5 },
      { name: 'x', nameRev: '2' },
      ['x'],
      null,
      'x',
    ]) {
      expect(groupTitleOf(notice(body)), JSON.stringify(body)).toBeNull();
    }
    expect(groupTitleOf(notice({ name: 'x', nameRev: 1 }, 'group.tier'))).toBeNull();
    expect(groupTitleOf({ ...notice({ name: 'x' }), kind: 'msg' })).toBeNull();
    expect(groupTitleOf({ ...notice({ name: 'x' }), conv: { type: 'user', id: 'bob' } })).toBeNull();
  });

  it('a higher revision wins, the same one again wins (later), a lower one never', () => {
    expect(titleWins(null, { name: 'a', rev: 0 })).toBe(true);
    expect(titleWins({ name: 'a', rev: 1 }, { name: 'b', rev: 2 })).toBe(true);
    expect(titleWins({ name: 'a', rev: 1 }, { name: 'a', rev: 1 })).toBe(true);
    expect(titleWins({ name: 'b', rev: 2 }, { name: 'a', rev: 1 })).toBe(false);
  });
});
