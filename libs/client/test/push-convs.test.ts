/**
 * ConversationSync and push `convs` (v1.1): the states a push carries are taken as they come;
 * a push that lacks the state of a conversation its entries name (or has one older than them)
 * is refreshed with a raw sync page over the pushed range, as a push without `convs` is.
 */
import { describe, expect, it } from 'vitest';
import { ConversationSync } from '../src/conversation-sync.ts';
import type { Conv, Conversation, Entry, OpName } from '../src/index.ts';

const bob: Conv = { type: 'user', id: 'bob' };
const team: Conv = { type: 'group', id: 'team' };

const state = (conv: Conv, asOfSeq: number, unread = 1): Conversation => ({
  conv,
  lastSeq: asOfSeq,
  last: null,
  readSeq: 0,
  unread,
  mentions: 0,
  clearedSeq: 0,
  asOfSeq,
});
const entry = (seq: number, over: Partial<Entry> = {}): Entry => ({
  seq,
  kind: 'msg',
  appinfo: `a${seq}`,
  conv: bob,
  from: 'bob',
  sendTime: seq,
  ...over,
});

function rig() {
  const requests: Array<{ op: OpName; args: unknown }> = [];
  const sync = new ConversationSync({
    request: async (op, args) => {
      requests.push({ op, args });
      return { entries: [], headSeq: 0, hasMore: false, convs: [state(bob, 99, 7)] } as never;
    },
    emit: async () => undefined,
    track: true,
  });
  return { sync, requests };
}

describe('push convs in the SDK', () => {
  it('takes the states of a complete push without a request', async () => {
    const { sync, requests } = rig();
    await sync.push({ kind: 'push', prevSeq: 4, entries: [entry(5), entry(6, { conv: team })], convs: [state(bob, 5), state(team, 6)] });
    expect(requests).toEqual([]);
    expect(sync.store.get(team)?.asOfSeq).toBe(6);
  });

  it.each([
    ['a named conversation missing', [entry(5), entry(6, { conv: team })], [state(bob, 5)]],
    ['a state older than the entry naming it', [entry(5)], [state(bob, 4)]],
    ['a clear of a conversation with no state', [entry(5, { kind: 'clear', conv: team, upToSeq: 3 })], []],
  ])('refreshes with sync over the pushed range when %s', async (_name, entries, convs) => {
    const { sync, requests } = rig();
    await sync.push({ kind: 'push', prevSeq: 4, entries, convs });
    expect(requests).toEqual([{ op: 'sync', args: { maxSeq: 4, limit: entries.length } }]);
    expect(sync.store.get(bob)?.unread).toBe(7); // the sync page's state, the newest
  });

  it('a push of receipts only, or of a delete with the states the server sent, needs no refresh', async () => {
    const { sync, requests } = rig();
    await sync.push({ kind: 'push', prevSeq: 4, entries: [entry(5, { kind: 'receipt', referSeq: 1 })], convs: [] });
    await sync.push({ kind: 'push', prevSeq: 5, entries: [entry(6, { kind: 'delete', seqs: [2] })], convs: [state(bob, 6)] });
    expect(requests).toEqual([]);
  });
});
