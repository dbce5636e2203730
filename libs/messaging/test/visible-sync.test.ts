/**
 * Sync and history skip what the owner deleted or cleared, over the real embedded engine and
 * its conversation index; a page never comes back empty with hasMore (a client would ask again
 * forever), however many hidden entries lie between two visible ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, type NewEntry } from '@seqline/core';
import { createMessaging, type Messaging } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

let rig: EmbeddedRig;
let messaging: Messaging;
const alice = { tenant: 't', user: 'alice' };

beforeAll(async () => {
  rig = await openEmbeddedRig('visible-sync');
  messaging = createMessaging(rig.deps);
});
afterAll(async () => {
  await rig.close();
});

const fromBob = (i: number): NewEntry => ({
  kind: 'msg',
  appinfo: `m${i}`,
  conv: { type: 'user', id: 'bob' },
  from: 'bob',
  sendTime: 1_763_700_000_000 + i,
  type: 'text',
  body: { i },
});

describe('sync and history over hidden entries', () => {
  it('scan past more hidden entries than one read returns, and say hasMore only when a visible one remains', async () => {
    // 700 messages (seqs 1-700), the middle 698 deleted: more than one scan batch (500).
    const outcomes = await rig.owner.append({ inbox: inboxKey('t', 'alice'), entries: Array.from({ length: 700 }, (_, i) => fromBob(i)) });
    const seqs = outcomes.map((o) => o.seq);
    const hidden = seqs.slice(1, -1);
    const { seq: deleteSeq } = await messaging.deleteForMe(alice, hidden);

    const first = await messaging.sync(alice, 0, 1);
    expect(first.entries.map((e) => e.seq)).toEqual([seqs[0]]);
    expect(first.hasMore).toBe(true);
    const second = await messaging.sync(alice, seqs[0]!, 2);
    expect(second.entries.map((e) => e.seq)).toEqual([seqs.at(-1), deleteSeq]);
    expect(second.hasMore).toBe(false);
    expect(second.headSeq).toBe(deleteSeq);
    // The conversation the page touches (the last message and the delete's targets), as indexed.
    expect(second.convs).toHaveLength(1);
    expect(second.convs[0]).toMatchObject({ conv: { type: 'user', id: 'bob' }, unread: 2, asOfSeq: deleteSeq });

    const back = await messaging.history(alice, 0, 2);
    expect(back.entries.map((e) => e.seq)).toEqual([deleteSeq, seqs.at(-1)]);
    expect(back.hasMore).toBe(true);
    const older = await messaging.history(alice, seqs.at(-1)!, 5);
    expect(older.entries.map((e) => e.seq)).toEqual([seqs[0]]);
    expect(older.hasMore).toBe(false);
  });

  it('a clear hides the conversation up to its mark from sync and from history {conv}', async () => {
    const carol = { tenant: 't', user: 'carol' };
    const outcomes = await rig.owner.append({ inbox: inboxKey('t', 'carol'), entries: Array.from({ length: 5 }, (_, i) => fromBob(i)) });
    const { seq: clearSeq } = await messaging.clear(carol, { type: 'user', id: 'bob' }, outcomes[2]!.seq);
    const all = await messaging.sync(carol, 0, 100);
    expect(all.entries.map((e) => e.seq)).toEqual([outcomes[3]!.seq, outcomes[4]!.seq, clearSeq]);
    const conv = await messaging.conversationHistory(carol, { type: 'user', id: 'bob' }, 0, 10);
    expect(conv.entries.map((e) => e.seq)).toEqual([outcomes[4]!.seq, outcomes[3]!.seq]);
    const listed = await messaging.conversations(carol, { limit: 10, lastMessages: 5 });
    expect(listed.headSeq).toBe(clearSeq);
    expect(listed.convs[0]?.messages?.map((e) => e.seq)).toEqual([outcomes[3]!.seq, outcomes[4]!.seq]);
    expect(listed.convs[0]?.state).toMatchObject({ clearedSeq: outcomes[2]!.seq, unread: 2 });
  });
});
