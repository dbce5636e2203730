/**
 * Recalls and edits reach exactly the inboxes that hold a copy of the message (the 1:1 peer,
 * the write-fanout snapshot taken at send time, or for a read-fanout message the sender and
 * the members it names), over the real embedded engine and workers; and no view shows a
 * recalled message to anyone who holds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, type Clock, type Entry, type Json } from '@seqline/core';
import { createMessaging, startWorkers, type Caller, type Messaging, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';
import { drained, eventually } from './support/drained.ts';

/** A clock the test moves by hand: several ops in one millisecond. */
class HandClock implements Clock {
  t = Date.now();
  now(): number {
    return this.t;
  }
}

let rig: EmbeddedRig;
let messaging: Messaging;
let workers: Workers;
const clock = new HandClock();
let n = 0;
const T = 't';
const as = (user: string): Caller => ({ tenant: T, user });
const uniq = (p: string) => `${p}${++n}`;

beforeAll(async () => {
  rig = await openEmbeddedRig('copy-holders');
  messaging = createMessaging({ ...rig.deps, env: { ...rig.deps.env, clock } });
  workers = await startWorkers(rig.deps);
});
afterAll(async () => {
  workers.stop();
  await rig.close();
});

const inboxOf = (user: string): Promise<Entry[]> => rig.engine.timeline.readAfter({ inbox: inboxKey(T, user), afterSeq: 0, limit: 10_000 });
/** Entries of `user`'s inbox that name `appinfo`: the message itself, or a recall or edit of it. */
async function naming(user: string, appinfo: string): Promise<Entry[]> {
  return (await inboxOf(user)).filter((e) => e.appinfo === appinfo || e.recall?.appinfo === appinfo || e.edit?.appinfo === appinfo);
}
async function send(from: string, group: string, text: string, mentions?: string[]): Promise<string> {
  const appinfo = uniq('m');
  await messaging.send(as(from), { appinfo, to: { group }, type: 'text', body: { text }, ...(mentions ? { mentions } : {}) });
  return appinfo;
}
/** What every view of `user` shows of `conv`: conversations' messages and last, history {conv}. */
async function shown(user: string, group: string): Promise<{ messages: string[]; last: string | undefined; history: string[] }> {
  const conv = { type: 'group' as const, id: group };
  const list = await messaging.conversations(as(user), { limit: 100, lastMessages: 50 });
  const listed = list.convs.find((c) => c.state.conv.type === 'group' && c.state.conv.id === group);
  const history = await messaging.conversationHistory(as(user), conv, 0, 100);
  return {
    messages: (listed?.messages ?? []).map((e) => e.appinfo),
    last: listed?.state.last?.appinfo,
    history: history.entries.map((e) => e.appinfo),
  };
}

describe('write-fanout: the send-time snapshot', () => {
  it('a recall after add and remove reaches the removed holder, not the late joiner', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('alice'), { name: 'g', members: ['bob', 'carol'], id: g });
    await drained(rig);
    clock.t += 10;
    const m1 = await send('alice', g, 'one');
    await drained(rig);
    clock.t += 10;
    await messaging.addMembers(as('alice'), g, ['dave']);
    clock.t += 10;
    await messaging.removeMembers(as('alice'), g, ['carol']);
    clock.t += 10;
    await messaging.recall(as('alice'), m1);
    await drained(rig);

    // Dave never had m1: nothing in his inbox names it (no appinfo, no send time, no recaller).
    expect(await naming('dave', m1)).toEqual([]);
    // Carol holds m1: she gets the recall, and no view of hers shows m1 any more.
    expect((await naming('carol', m1)).map((e) => e.kind)).toEqual(['msg', 'recall']);
    expect((await naming('bob', m1)).map((e) => e.kind)).toEqual(['msg', 'recall']);
    const carol = await shown('carol', g);
    expect(carol.messages).not.toContain(m1);
    expect(carol.history).not.toContain(m1);
    expect(carol.last).not.toBe(m1);
  });

  it('membership changes in the same millisecond as the send: recall and edit follow the snapshot', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('alice'), { name: 'g', members: ['bob', 'carol'], id: g });
    await drained(rig);
    clock.t += 10;
    // One millisecond: m1 is sent while carol is a member and dave is not; then both change.
    const m1 = await send('alice', g, 'one');
    await messaging.addMembers(as('alice'), g, ['dave']);
    await messaging.removeMembers(as('alice'), g, ['carol']);
    await drained(rig);
    expect((await naming('dave', m1)).map((e) => e.kind)).toEqual([]);
    expect((await naming('carol', m1)).map((e) => e.kind)).toEqual(['msg']);

    const m2 = await send('alice', g, 'two');
    await drained(rig);
    await messaging.edit(as('alice'), { appinfo: m1, body: { text: 'one, edited' } });
    await messaging.recall(as('alice'), m2);
    await drained(rig);
    expect(await naming('dave', m1)).toEqual([]);
    expect((await naming('dave', m2)).map((e) => e.kind)).toEqual(['msg', 'recall']);
    expect((await naming('carol', m1)).map((e) => e.kind)).toEqual(['msg', 'edit']);
    expect(await naming('carol', m2)).toEqual([]);
    expect((await naming('bob', m1)).map((e) => e.kind)).toEqual(['msg', 'edit']);
  });
});

describe('read-fanout: the stream and the members it names', () => {
  it('a recall of a mention after the named member left: no view of theirs shows the message', async () => {
    const g = uniq('g');
    const created = await messaging.createGroup(as('a'), { name: 'g', members: ['b', 'c', 'd', 'e', 'f'], id: g });
    expect(created.tier).toBe('huge');
    await drained(rig);
    clock.t += 10;
    const m2 = await send('b', g, 'hey d', ['d']);
    await drained(rig);
    clock.t += 10;
    await messaging.removeMembers(as('a'), g, ['d']);
    clock.t += 10;
    await messaging.recall(as('b'), m2);
    await drained(rig);

    expect((await naming('d', m2)).map((e) => e.kind)).toEqual(['msg', 'recall']);
    let d = await shown('d', g);
    expect(d.history).not.toContain(m2);
    expect(d.messages).not.toContain(m2);
    expect(d.last).not.toBe(m2);
    // With the removal notice gone, the stream's copy must not become `last` either.
    const removal = (await inboxOf('d')).filter((e) => e.kind === 'group').at(-1)!;
    await messaging.deleteForMe(as('d'), [removal.seq]);
    d = await shown('d', g);
    expect(d.messages).not.toContain(m2);
    expect(d.last).not.toBe(m2);
  });

  it('an edit after the named member left shows in their views', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('a'), { name: 'g', members: ['b', 'c', 'd', 'e', 'f'], id: g });
    await drained(rig);
    clock.t += 10;
    const m = await send('b', g, 'hey d', ['d']);
    await drained(rig);
    clock.t += 10;
    await messaging.removeMembers(as('a'), g, ['d']);
    clock.t += 10;
    await messaging.edit(as('b'), { appinfo: m, body: { text: 'hey d, edited' } });
    await drained(rig);
    const list = await messaging.conversations(as('d'), { limit: 100, lastMessages: 50 });
    const listed = list.convs.find((c) => c.state.conv.id === g)!;
    const bodies = (listed.messages ?? []).filter((e) => e.appinfo === m).map((e) => e.body as Json);
    expect(bodies).toEqual([{ text: 'hey d, edited' }]);
  });

  it('the recaller of a stream message it holds no copy of: sync names the conversation at or past the recall', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('a'), { name: 'g', members: ['b', 'c', 'd', 'e', 'f'], id: g });
    await drained(rig);
    clock.t += 10;
    const m3 = await send('b', g, 'three');
    await drained(rig);
    const before = (await inboxOf('a')).at(-1)!.seq;
    const { seq } = await messaging.recall(as('a'), m3, 'b');
    const sync = await messaging.sync(as('a'), before, 100);
    expect(sync.entries.map((e) => e.seq)).toEqual([seq]);
    const conv = sync.convs.find((c) => c.conv.type === 'group' && c.conv.id === g);
    expect(conv?.asOfSeq).toBeGreaterThanOrEqual(seq);
  });
});

describe('edit: idempotent and resumable by its editId', () => {
  it('a retry with the same editId stores nothing new; other content under it is refused', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('alice'), { name: 'g', members: ['bob', 'carol'], id: g });
    const m = await send('alice', g, 'one');
    await drained(rig);
    const editId = uniq('e');
    const first = await messaging.edit(as('alice'), { appinfo: m, body: { text: 'two' }, editId });
    const again = await messaging.edit(as('alice'), { appinfo: m, body: { text: 'two' }, editId });
    expect(again.seq).toBe(first.seq);
    await expect(messaging.edit(as('alice'), { appinfo: m, body: { text: 'three' }, editId })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await drained(rig);
    for (const user of ['alice', 'bob', 'carol']) {
      expect((await naming(user, m)).map((e) => e.kind)).toEqual(['msg', 'edit']);
    }
  });

  it('a failed fanout enqueue after the edit was stored: the retry resumes it, each copy edited once', async () => {
    const g = uniq('g');
    await messaging.createGroup(as('alice'), { name: 'g', members: ['bob', 'carol'], id: g });
    const m = await send('alice', g, 'one');
    await drained(rig);
    let failNext = true;
    const flaky = createMessaging({
      ...rig.deps,
      queue: {
        ...rig.deps.queue,
        enqueue: async (input) => {
          if (failNext && input.id.startsWith('edit')) {
            failNext = false;
            throw new Error('injected: enqueue lost');
          }
          return rig.deps.queue.enqueue(input);
        },
      },
    });
    const editId = uniq('e');
    await expect(flaky.edit(as('alice'), { appinfo: m, body: { text: 'two' }, editId })).rejects.toThrow('injected');
    await drained(rig);
    expect((await naming('bob', m)).map((e) => e.kind)).toEqual(['msg']);
    await flaky.edit(as('alice'), { appinfo: m, body: { text: 'two' }, editId });
    await drained(rig);
    for (const user of ['alice', 'bob', 'carol']) {
      expect((await naming(user, m)).map((e) => e.kind)).toEqual(['msg', 'edit']);
    }
    await eventually('bob shows the edit', async () => {
      const list = await messaging.conversations(as('bob'), { limit: 100, lastMessages: 5 });
      return list.convs.find((c) => c.state.conv.id === g)?.state.last?.edit?.body !== undefined;
    });
  });
});
