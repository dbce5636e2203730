/**
 * Core's conversation index rules, case by case, through an in-memory adapter that checks after
 * every entry that the index kept incrementally equals a recount of the inbox.
 */
import { describe, expect, it } from 'vitest';
import { type Conv, type Entry } from '@seqline/core';
import {
  historyClearOf,
  historyDeleteOf,
  historyEditOf,
  historyGroupEvent,
  historyMsg,
  historyReadConv,
  historyReadSeqs,
  historyRecallOf,
} from '../src/index.ts';
import { indexUnderTest } from './in-memory-conversation-index.ts';

const ME = 'me';
const BOB: Conv = { type: 'user', id: 'bob' };
const G1: Conv = { type: 'group', id: 'g1' };

describe('conversation index: messages and mentions', () => {
  it('a message from someone else creates the conversation, unread 1, last = it', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    const m = add(historyMsg('a1', BOB, 'bob'));
    expect(rec('user:bob')).toEqual({
      conv: BOB,
      lastSeq: m.seq,
      lastMsgSeq: m.seq,
      readSeq: 0,
      clearedSeq: 0,
      unread: 1,
      mentions: 0,
      asOfSeq: m.seq,
    });
    expect(ix.lastOf('user:bob')?.appinfo).toBe('a1');
  });

  it("counts a mention of the user or @all once per message, never the user's own", () => {
    const { add, rec } = indexUnderTest(ME);
    add(historyMsg('g-1', G1, 'bob', [ME]));
    add(historyMsg('g-2', G1, 'bob', ['@all']));
    add(historyMsg('g-3', G1, 'bob', ['@all', ME]));
    add(historyMsg('g-4', G1, 'bob', ['carol']));
    expect(rec('group:g1')).toMatchObject({ unread: 4, mentions: 3 });
    add(historyMsg('g-5', G1, ME, [ME, '@all']));
    expect(rec('group:g1')).toMatchObject({ unread: 0, mentions: 0 });
  });

  it("replying reads the chat: the user's own message moves readSeq to it", () => {
    const { add, rec } = indexUnderTest(ME);
    add(historyMsg('a1', BOB, 'bob'));
    add(historyMsg('a2', BOB, 'bob', [ME]));
    const mine = add(historyMsg('b1', BOB, ME));
    expect(rec('user:bob')).toMatchObject({ readSeq: mine.seq, unread: 0, mentions: 0, lastMsgSeq: mine.seq });
    add(historyMsg('a3', BOB, 'bob'));
    expect(rec('user:bob')).toMatchObject({ unread: 1 });
  });

  it('group events are activity (listed, can be last) but never unread; group.tier is not activity', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    const c = add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob'));
    expect(rec('group:g1')).toMatchObject({ lastSeq: c.seq, lastMsgSeq: c.seq, unread: 0 });
    add(historyGroupEvent('group:g1:tier', 'g1', 'tier', 'bob'));
    expect(rec('group:g1')).toMatchObject({ lastSeq: c.seq, asOfSeq: c.seq });
    add(historyGroupEvent('group:g2:tier', 'g2', 'tier', 'bob'));
    expect(ix.records.has('group:g2')).toBe(false);
  });
});

describe('conversation index: titles', () => {
  it("a group's title is the name its notices carry; a rename replaces it, an older revision arriving late does not", () => {
    const { add, rec } = indexUnderTest(ME);
    add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob', { name: 'team', nameRev: 0 }));
    expect(rec('group:g1')).toMatchObject({ title: 'team', titleRev: 0 });
    const renamed = add(historyGroupEvent('group:g1:rename:2', 'g1', 'rename', 'bob', { name: 'crew', nameRev: 2 }));
    expect(rec('group:g1')).toMatchObject({ title: 'crew', titleRev: 2, lastSeq: renamed.seq, unread: 0 });
    // Fanout jobs race: the rename to revision 1 and an add made before it land after revision 2.
    add(historyGroupEvent('group:g1:rename:1', 'g1', 'rename', 'bob', { name: 'squad', nameRev: 1 }));
    add(historyGroupEvent('group:g1:add:x', 'g1', 'add', 'bob', { name: 'team', nameRev: 0 }));
    expect(rec('group:g1')).toMatchObject({ title: 'crew', titleRev: 2 });
    // The same revision again (an add made after the rename) keeps it.
    add(historyGroupEvent('group:g1:add:y', 'g1', 'add', 'bob', { name: 'crew', nameRev: 2 }));
    expect(rec('group:g1')).toMatchObject({ title: 'crew', titleRev: 2 });
  });

  it('a notice without a name (written before names were carried) leaves the title; without a revision it is the creation name', () => {
    const { add, rec } = indexUnderTest(ME);
    add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob'));
    expect(rec('group:g1')?.title).toBeUndefined();
    expect(rec('group:g1')).not.toHaveProperty('title');
    add(historyGroupEvent('group:g1:add:x', 'g1', 'add', 'bob', { name: 'legacy' }));
    expect(rec('group:g1')).toMatchObject({ title: 'legacy', titleRev: 0 });
    add(historyGroupEvent('group:g1:remove:x', 'g1', 'remove', 'bob'));
    expect(rec('group:g1')).toMatchObject({ title: 'legacy', titleRev: 0 });
  });

  it('1:1 chats have none; group.tier names nothing; deleting or clearing the notices keeps the title', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    add(historyMsg('a1', BOB, 'bob'));
    expect(rec('user:bob')).not.toHaveProperty('title');
    add(historyGroupEvent('group:g2:tier', 'g2', 'tier', 'bob', { name: 'never', nameRev: 9 }));
    expect(ix.records.has('group:g2')).toBe(false);
    const created = add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob', { name: 'team', nameRev: 0 }));
    add(historyGroupEvent('group:g1:tier', 'g1', 'tier', 'bob', { name: 'never', nameRev: 9 }));
    expect(rec('group:g1')).toMatchObject({ title: 'team' });
    add(historyDeleteOf('delete:1', ME, [created.seq]));
    add(historyClearOf('clear:1', ME, G1));
    expect(rec('group:g1')).toMatchObject({ title: 'team', titleRev: 0, lastMsgSeq: 0 });
  });
});

describe('conversation index: reads', () => {
  it('read {conv, upToSeq} never moves back and is clamped to lastSeq', () => {
    const { add, rec } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    const a2 = add(historyMsg('a2', BOB, 'bob'));
    add(historyReadConv('read:1', ME, BOB, a2.seq));
    expect(rec('user:bob')).toMatchObject({ readSeq: a2.seq, unread: 0 });
    add(historyReadConv('read:2', ME, BOB, a1.seq)); // a stale read from another device
    expect(rec('user:bob')).toMatchObject({ readSeq: a2.seq, unread: 0 });
    add(historyReadConv('read:3', ME, BOB, 1_000_000)); // past the head: must not pre-read what comes
    expect(rec('user:bob')?.readSeq).toBe(a2.seq);
    add(historyMsg('a3', BOB, 'bob'));
    expect(rec('user:bob')).toMatchObject({ unread: 1 });
  });

  it('a read of a conversation with no activity creates nothing', () => {
    const { add, ix } = indexUnderTest(ME);
    add(historyReadConv('read:1', ME, BOB, 5));
    add(historyClearOf('clear:1', ME, BOB));
    expect(ix.records.size).toBe(0);
  });

  it("a v1 read {seqs} moves each conversation's cursor to the highest seq it names there", () => {
    const { add, rec } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    const g1 = add(historyMsg('g1', G1, 'carol'));
    add(historyMsg('g2', G1, 'carol'));
    add(historyReadSeqs('read:1', ME, [a1.seq, g1.seq, 999]));
    expect(rec('user:bob')).toMatchObject({ readSeq: a1.seq, unread: 0 });
    expect(rec('group:g1')).toMatchObject({ readSeq: g1.seq, unread: 1 });
  });
});

describe('conversation index: recall, edit, delete, clear', () => {
  it('two senders of one appinfo: a recall or an edit reaches the message of the sender it names only', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob'));
    const bobs = add(historyMsg('local-1', G1, 'bob'));
    const carols = add(historyMsg('local-1', G1, 'carol'));
    expect(rec('group:g1')).toMatchObject({ unread: 2, lastMsgSeq: carols.seq });
    // The admin (bob) recalls carol's local-1: the recall names its sender.
    add(historyRecallOf(carols, 'bob'));
    expect(rec('group:g1')).toMatchObject({ unread: 1, lastMsgSeq: bobs.seq });
    // carol's edit of "her" local-1 never reaches bob's.
    add(historyEditOf({ ...bobs, from: 'carol' }, 'carol', 5, 'forged'));
    expect(ix.lastOf('group:g1')?.body).toEqual({ text: 'local-1' });
    add(historyEditOf(bobs, 'bob', 6, 'edited by bob'));
    expect(ix.lastOf('group:g1')?.body).toEqual({ text: 'edited by bob' });
  });

  it('recalling the last message moves last to the newest still visible and uncounts it', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    const a2 = add(historyMsg('a2', BOB, 'bob', [ME]));
    add(historyRecallOf(a2, 'bob'));
    expect(rec('user:bob')).toMatchObject({ lastSeq: a2.seq, lastMsgSeq: a1.seq, unread: 1, mentions: 0 });
    expect(ix.lastOf('user:bob')?.appinfo).toBe('a1');
    add(historyRecallOf(a1, 'bob'));
    expect(rec('user:bob')).toMatchObject({ lastMsgSeq: 0, unread: 0 });
    expect(ix.lastOf('user:bob')).toBeNull();
  });

  it('a recall of a read message, of a control entry or of an unknown appinfo changes no count, but is seen (asOfSeq)', () => {
    const { add, rec } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    const r = add(historyReadConv('read:1', ME, BOB, a1.seq));
    add(historyRecallOf(a1, 'bob'));
    expect(rec('user:bob')).toMatchObject({ unread: 0, lastMsgSeq: 0 });
    const before = rec('user:bob');
    add(historyRecallOf(r, ME));
    const missed = add(historyRecallOf({ ...a1, appinfo: 'nope' }, 'bob'));
    // Every entry naming a conversation brings its state to it, hit or miss (sync, push convs).
    expect(rec('user:bob')).toEqual({ ...before, asOfSeq: missed.seq });
  });

  it('a recall or an edit of a message this inbox holds no copy of moves its conversation to it, nothing else', () => {
    const { add, rec } = indexUnderTest(ME);
    const notice = add(historyGroupEvent('group:g1:create', 'g1', 'create', 'bob'));
    const elsewhere: Entry = { ...notice, seq: 999_999, kind: 'msg', appinfo: 'in-the-stream', from: 'bob', type: 'text', body: {} };
    const recall = add(historyRecallOf(elsewhere, 'alice'));
    expect(rec('group:g1')).toMatchObject({ lastSeq: notice.seq, lastMsgSeq: notice.seq, unread: 0, asOfSeq: recall.seq });
    const edit = add(historyEditOf({ ...elsewhere, appinfo: 'also-elsewhere' }, 'bob', 5, 'x'));
    expect(rec('group:g1')).toMatchObject({ lastSeq: notice.seq, asOfSeq: edit.seq });
    // A conversation this inbox has nothing of is not created by them.
    add(historyRecallOf({ ...elsewhere, appinfo: 'in-g9', conv: { type: 'group', id: 'g9' } }, 'alice'));
    expect(rec('group:g9')).toBeUndefined();
  });

  it('an edit by the sender shows in last; by anyone else it is ignored; the latest editedAt wins', () => {
    const { add, ix } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    add(historyEditOf(a1, 'carol', 5, 'forged'));
    expect(ix.lastOf('user:bob')?.body).toEqual({ text: 'a1' });
    add(historyEditOf(a1, 'bob', 10, 'second'));
    add(historyEditOf(a1, 'bob', 7, 'late but older'));
    expect(ix.lastOf('user:bob')).toMatchObject({ body: { text: 'second' }, edit: { editedAt: 10 } });
    add(historyEditOf(a1, 'bob', 10, 'tie, appended later'));
    expect(ix.lastOf('user:bob')?.body).toEqual({ text: 'tie, appended later' });
    expect(ix.entryAt(a1.seq)?.body).toEqual({ text: 'a1' }); // the inbox keeps what was sent
  });

  it('delete hides messages once; control entries and unknown seqs only get the mark', () => {
    const { add, rec, ix } = indexUnderTest(ME);
    const a1 = add(historyMsg('a1', BOB, 'bob'));
    const a2 = add(historyMsg('a2', BOB, 'bob'));
    const r = add(historyReadConv('read:1', ME, G1, 1));
    add(historyDeleteOf('delete:1', ME, [a2.seq, r.seq, 999]));
    expect(rec('user:bob')).toMatchObject({ unread: 1, lastMsgSeq: a1.seq, lastSeq: a2.seq });
    expect([...ix.deleted].sort()).toEqual([a2.seq, r.seq].sort());
    add(historyDeleteOf('delete:2', ME, [a2.seq, a1.seq]));
    expect(rec('user:bob')).toMatchObject({ unread: 0, lastMsgSeq: 0 });
  });

  it('clear without upToSeq hides everything so far; later messages count again; never back', () => {
    const { add, rec } = indexUnderTest(ME);
    add(historyMsg('a1', BOB, 'bob'));
    const a2 = add(historyMsg('a2', BOB, 'bob'));
    add(historyClearOf('clear:1', ME, BOB));
    expect(rec('user:bob')).toMatchObject({ clearedSeq: a2.seq, unread: 0, lastMsgSeq: 0, readSeq: 0 });
    const a3 = add(historyMsg('a3', BOB, 'bob'));
    add(historyClearOf('clear:2', ME, BOB, 1));
    expect(rec('user:bob')).toMatchObject({ clearedSeq: a2.seq, unread: 1, lastMsgSeq: a3.seq });
    add(historyDeleteOf('delete:1', ME, [a3.seq]));
    expect(rec('user:bob')).toMatchObject({ lastMsgSeq: 0, unread: 0 }); // a1, a2 stay cleared
  });
});
