/**
 * Offline notifications on the embedded stack (issue #27): coalesced at the inbox owner, one
 * signed POST per user per window to a real HTTP receiver, the badge as the `conversations` op
 * reports it, nothing for an online user, own copies or control entries.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey } from '@seqline/core';
import { OFFLINE_NOTIFY_QUEUE } from '../src/index.ts';
import { badgeOf, eventually, NOTIFY_SECRET, openNotifyRig, sleep, type NotifyBody, type NotifyRig } from './support/offline-notify-rig.ts';

const WINDOW_MS = 300;
let rig: NotifyRig;
let receiver: HookReceiver;
let tenants = 0;

beforeAll(async () => {
  rig = await openNotifyRig('offline-notify');
  receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
});
afterAll(async () => {
  await rig.close();
  await receiver.close();
});

/** A fresh tenant with a notify URL (and what else the test sets), so tests never see each other's calls. */
function tenant(extra: Record<string, unknown> = {}): string {
  const t = `n${++tenants}`;
  rig.hooks.set(t, { notifyUrl: receiver.url, secret: NOTIFY_SECRET, notifyWindowMs: WINDOW_MS, ...extra });
  return t;
}

function callsTo(t: string, user?: string): NotifyBody[] {
  return receiver
    .accepted()
    .map((c) => c.json as NotifyBody)
    .filter((b) => b.tenant === t && (user === undefined || b.user === user));
}

let apps = 0;
const send = (t: string, from: string, to: { user: string } | { group: string }, body: unknown = { text: 'hi' }, mentions?: string[]) =>
  rig.messaging.send(
    { tenant: t, user: from },
    { appinfo: `ap${++apps}`, to, type: 'text', body: body as never, ...(mentions && { mentions }) },
  );

describe('offline notifications (embedded)', () => {
  it('5 messages within a window make one call with 5 entries and the badge; the next window makes a second', async () => {
    const t = tenant();
    // Sent together: sequential sends on a loaded machine could outlast the window and split it.
    await Promise.all([0, 1, 2, 3, 4].map((i) => send(t, 'alice', { user: 'bob' }, { text: `m${i}` })));
    await eventually('the first notification', () => callsTo(t).length >= 1);
    await sleep(WINDOW_MS * 2);
    expect(callsTo(t)).toHaveLength(1);
    const [first] = callsTo(t) as [NotifyBody];
    const bobInbox = await rig.engine.timeline.readAfter({ inbox: inboxKey(t, 'bob'), afterSeq: 0, limit: 100 });
    const bobMsgs = bobInbox.filter((e) => e.kind === 'msg');
    expect(first).toEqual({
      type: 'notify',
      tenant: t,
      user: 'bob',
      badge: 5,
      entries: bobMsgs.map((e) => ({ seq: e.seq, conv: { type: 'user', id: 'alice' }, from: 'alice', appinfo: e.appinfo, mention: false })),
    });
    expect(first.badge).toBe(await badgeOf(rig, t, 'bob'));
    expect(first.entries.map((e) => e.appinfo)).toEqual(bobMsgs.map((e) => e.appinfo));

    await send(t, 'alice', { user: 'bob' });
    await eventually('the second notification', () => callsTo(t).length >= 2);
    const second = callsTo(t)[1] as NotifyBody;
    expect(second.entries).toHaveLength(1);
    expect(second.badge).toBe(6);
    expect(second.badge).toBe(await badgeOf(rig, t, 'bob'));
    // The sender's own copies never notify.
    expect(callsTo(t, 'alice')).toEqual([]);
  });

  it('the badge follows reads: read up to a message, and the next notification counts only what is left', async () => {
    const t = tenant();
    for (let i = 0; i < 3; i++) await send(t, 'alice', { user: 'bob' });
    await eventually('a notification', () => callsTo(t).length >= 1);
    const [{ entries }] = callsTo(t) as [NotifyBody];
    await rig.messaging.readConversation({ tenant: t, user: 'bob' }, { type: 'user', id: 'alice' }, entries[1]!.seq);
    await send(t, 'carol', { user: 'bob' });
    await eventually('a second notification', () => callsTo(t).length >= 2);
    expect((callsTo(t)[1] as NotifyBody).badge).toBe(2);
    expect(await badgeOf(rig, t, 'bob')).toBe(2);
  });

  it('none to an online user; one again once they are gone; none when they come online inside the window', async () => {
    const t = tenant();
    const unsubscribe = rig.messaging.subscribe({ tenant: t, user: 'bob' }, () => {});
    await send(t, 'alice', { user: 'bob' });
    await sleep(WINDOW_MS * 2);
    expect(callsTo(t)).toEqual([]);
    unsubscribe();
    await send(t, 'alice', { user: 'bob' });
    await eventually('a notification once offline', () => callsTo(t).length === 1);
    expect((callsTo(t)[0] as NotifyBody).entries).toHaveLength(1);

    await send(t, 'alice', { user: 'carol' });
    const off = rig.messaging.subscribe({ tenant: t, user: 'carol' }, () => {});
    await sleep(WINDOW_MS * 2);
    expect(callsTo(t, 'carol')).toEqual([]);
    expect(rig.notifier.stats().droppedOnline).toBeGreaterThanOrEqual(1);
    off();
  });

  it('a mention in a huge (read-fanout) group notifies the mentioned offline member with mention:true, and no one else', async () => {
    const t = tenant();
    const members = ['bob', 'carol', 'dave', 'erin', 'frank'];
    const { id, tier } = await rig.messaging.createGroup({ tenant: t, user: 'alice' }, { name: 'big', members });
    expect(tier).toBe('huge');
    await send(t, 'alice', { group: id }, { text: 'hey carol' }, ['carol']);
    await eventually('the mention notification', () => callsTo(t, 'carol').length === 1);
    await sleep(WINDOW_MS * 2);
    const [call] = callsTo(t) as [NotifyBody];
    expect(callsTo(t)).toHaveLength(1);
    expect(call.user).toBe('carol');
    expect(call.entries).toEqual([expect.objectContaining({ conv: { type: 'group', id }, from: 'alice', mention: true })]);
    expect(call.badge).toBe(await badgeOf(rig, t, 'carol'));
  });

  it('control entries never notify: group events, reads, receipts, a recall', async () => {
    const t = tenant();
    const { id } = await rig.messaging.createGroup({ tenant: t, user: 'alice' }, { name: 'small', members: ['bob'] });
    await send(t, 'alice', { user: 'bob' });
    await eventually('bob notified', () => callsTo(t).length === 1);
    const [{ entries }] = callsTo(t) as [NotifyBody];
    // bob reads (a read in his inbox, a receipt in alice's), alice recalls (a recall in both).
    await rig.messaging.read({ tenant: t, user: 'bob' }, [entries[0]!.seq]);
    await rig.messaging.readConversation({ tenant: t, user: 'bob' }, { type: 'group', id }, 1);
    await rig.messaging.recall({ tenant: t, user: 'alice' }, entries[0]!.appinfo);
    await sleep(WINDOW_MS * 2);
    expect(callsTo(t).map((c) => c.user)).toEqual(['bob']);
    expect(callsTo(t)[0]?.entries).toHaveLength(1);
  });

  it('previews: the first 100 characters of a text body, only while the tenant allows them', async () => {
    const t = tenant({ notifyPreview: true });
    await send(t, 'alice', { user: 'bob' }, { text: 'x'.repeat(150) });
    await send(t, 'alice', { user: 'bob' }, { image: 'u' });
    await eventually('a notification', () => callsTo(t).length === 1);
    const [{ entries }] = callsTo(t) as [NotifyBody];
    expect(entries[0]?.preview).toBe('x'.repeat(100));
    expect(entries[1]).not.toHaveProperty('preview');

    // Turned off between the window and the delivery: the preview is not sent.
    receiver.setMode({ kind: 'status', status: 503 });
    await send(t, 'alice', { user: 'carol' }, { text: 'secret words' });
    await eventually('a failed attempt', () => receiver.calls.some((c) => (c.json as NotifyBody | undefined)?.user === 'carol'));
    rig.hooks.set(t, { ...rig.hooks.get(t), notifyPreview: false });
    receiver.setMode({ kind: 'ok' });
    await eventually('the notification', () => callsTo(t, 'carol').length === 1);
    expect((callsTo(t, 'carol')[0] as NotifyBody).entries[0]).not.toHaveProperty('preview');
  });

  it('no notifyUrl: no window, no job; a URL removed before delivery completes the job without a call', async () => {
    const t = `plain${++tenants}`;
    await send(t, 'alice', { user: 'bob' });
    expect(rig.notifier.stats().open).toBe(0);

    const u = tenant();
    receiver.setMode({ kind: 'status', status: 500 });
    try {
      await send(u, 'alice', { user: 'bob' });
      await eventually('a failed attempt', () => receiver.calls.some((c) => (c.json as NotifyBody | undefined)?.tenant === u));
      rig.hooks.set(u, { secret: NOTIFY_SECRET });
      await eventually('the job done', async () => (await rig.engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE })).length === 0);
    } finally {
      receiver.setMode({ kind: 'ok' });
    }
    expect(callsTo(u)).toEqual([]);
    expect((await rig.queue.deadLetters()).filter((j) => j.id.includes(`:${u}:`))).toEqual([]);
  });
});

describe('bounds', () => {
  it('a window keeps at most maxItemsPerWindow entries; the badge still counts them all', async () => {
    const small = await openNotifyRig('offline-notify-bound', { maxItemsPerWindow: 3 });
    try {
      small.hooks.set('b', { notifyUrl: receiver.url, secret: NOTIFY_SECRET, notifyWindowMs: WINDOW_MS });
      for (let i = 0; i < 5; i++)
        await small.messaging.send({ tenant: 'b', user: 'alice' }, { appinfo: `b${i}`, to: { user: 'bob' }, type: 'text', body: {} });
      await eventually('the notification', () => callsTo('b').length === 1);
      const [call] = callsTo('b') as [NotifyBody];
      expect(call.entries).toHaveLength(3);
      expect(call.badge).toBe(5);
      expect(small.notifier.stats().itemsOmitted).toBe(2);
    } finally {
      await small.close();
    }
  });
});
