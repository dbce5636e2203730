/**
 * Offline notifications against a hostile or broken receiver and hostile jobs (issue #27): a
 * receiver down for "5 minutes" (the queue's clock steps forward), past the give-up window
 * (dead-lettered, then replayed), unreachable, hanging, answering 500 — nothing is lost; a
 * tampered body or a replayed timestamp is refused by the receiver's check; malformed jobs are
 * dead-lettered while the worker keeps delivering.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Json } from '@seqline/core';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '@seqline/hooks';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OFFLINE_NOTIFY_QUEUE } from '../src/index.ts';
import { eventually, NOTIFY_SECRET, openNotifyRig, sleep, type NotifyBody, type NotifyRig } from './support/offline-notify-rig.ts';

const WINDOW_MS = 100;
const GIVE_UP_MS = 2_000;
let rig: NotifyRig;
let receiver: HookReceiver;
/** Added to the receiver's clock: a replay "later" is a replay with the clock moved on. */
let receiverSkewMs = 0;
let tenants = 0;

beforeAll(async () => {
  // A short give-up window (about 40 retries of 10–100 ms) so dead-lettering is seen in a test.
  rig = await openNotifyRig('offline-notify-hostile', { giveUpAfterMs: GIVE_UP_MS });
  receiver = await startHookReceiver({ secret: NOTIFY_SECRET, now: () => Date.now() + receiverSkewMs });
});
beforeEach(() => {
  receiver.setMode({ kind: 'ok' });
  receiverSkewMs = 0;
});
afterAll(async () => {
  await rig.close();
  await receiver.close();
});

function tenant(url = receiver.url): string {
  const t = `h${++tenants}`;
  rig.hooks.set(t, { notifyUrl: url, secret: NOTIFY_SECRET, notifyWindowMs: WINDOW_MS });
  return t;
}
const accepted = (t: string) =>
  receiver
    .accepted()
    .map((c) => c.json as NotifyBody)
    .filter((b) => b.tenant === t);
const attempts = (t: string) => receiver.calls.filter((c) => (c.json as NotifyBody | undefined)?.tenant === t).length;
let apps = 0;
const send = (t: string, from: string, to: string) =>
  rig.messaging.send({ tenant: t, user: from }, { appinfo: `hx${++apps}`, to: { user: to }, type: 'text', body: { text: 'hi' } });
const pending = async (t: string) =>
  (await rig.engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE })).filter((j) => j.id.startsWith(`offline-notify:${t}:`));

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('a receiver that fails', () => {
  it('down (500) for 5 minutes: every notification arrives once it is back, none dead-lettered', async () => {
    const t = tenant();
    receiver.setMode({ kind: 'status', status: 500 });
    for (const user of ['bob', 'carol', 'dave']) await send(t, 'alice', user);
    await eventually('every job tried twice', () => attempts(t) >= 6);
    rig.clock.offset += 5 * 60_000;
    await eventually('more tries after 5 minutes', () => attempts(t) >= 9);
    expect(accepted(t)).toEqual([]);
    receiver.setMode({ kind: 'ok' });
    await eventually('all three delivered', () => accepted(t).length === 3);
    expect(
      accepted(t)
        .map((b) => b.user)
        .sort(),
    ).toEqual(['bob', 'carol', 'dave']);
    // The job is removed right after its call was answered: wait for it, never race it.
    await eventually('the job done', async () => (await pending(t)).length === 0);
    expect((await rig.queue.deadLetters()).filter((j) => j.id.startsWith(`offline-notify:${t}:`))).toEqual([]);
  });

  it('past the retry window: dead-lettered, then replayed and delivered', async () => {
    const t = tenant();
    receiver.setMode({ kind: 'status', status: 503 });
    await send(t, 'alice', 'bob');
    const deadOf = async () => (await rig.queue.deadLetters()).filter((j) => j.id.startsWith(`offline-notify:${t}:bob:`));
    await eventually('dead-lettered', async () => (await deadOf()).length === 1, 30_000);
    const [dead] = await deadOf();
    expect(dead?.lastError).toMatch(/503/);
    receiver.setMode({ kind: 'ok' });
    expect(await rig.queue.replay(dead!.id)).toBe(true);
    await eventually('delivered after the replay', () => accepted(t).length === 1);
    expect(accepted(t)[0]).toMatchObject({ user: 'bob', badge: 1 });
  });

  it('unreachable (a closed port): retried until the URL works, nothing lost', async () => {
    const t = tenant(`http://127.0.0.1:${await closedPort()}/hook`);
    await send(t, 'alice', 'bob');
    await eventually('the job retrying', async () => (await pending(t)).some((j) => j.attempts >= 2));
    rig.hooks.set(t, { ...rig.hooks.get(t), notifyUrl: receiver.url });
    await eventually('delivered', () => accepted(t).length === 1);
    // The job is removed right after its call was answered: wait for it, never race it.
    await eventually('the job done', async () => (await pending(t)).length === 0);
  });

  it('hanging: the call times out and is retried, delivered once the receiver answers', async () => {
    const t = tenant();
    receiver.setMode({ kind: 'hang' });
    await send(t, 'alice', 'bob');
    await eventually('two hung tries', () => attempts(t) >= 2);
    const stuck = await pending(t);
    expect(stuck).toHaveLength(1);
    expect(stuck[0]?.lastError).toBeDefined();
    receiver.setMode({ kind: 'ok' });
    await eventually('delivered', () => accepted(t).length === 1);
    await sleep(300);
    expect(accepted(t)).toHaveLength(1);
  });
});

describe('a forged or replayed call', () => {
  it('a tampered body and a replayed (stale) timestamp are refused by the receiver', async () => {
    const t = tenant();
    await send(t, 'alice', 'bob');
    await eventually('a genuine call', () => accepted(t).length === 1);
    const genuine = receiver.calls.find((c) => (c.json as NotifyBody | undefined)?.tenant === t)!;
    const post = (body: string) =>
      fetch(receiver.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: genuine.headers[TIMESTAMP_HEADER] ?? '',
          [SIGNATURE_HEADER]: genuine.headers[SIGNATURE_HEADER] ?? '',
        },
        body,
      });
    const tampered = genuine.rawBody.replace('"badge":1', '"badge":99');
    expect(tampered).not.toBe(genuine.rawBody);
    expect((await post(tampered)).status).toBe(401);
    // The same bytes again, 10 minutes later: outside the signature's tolerance.
    receiverSkewMs = 10 * 60_000;
    expect((await post(genuine.rawBody)).status).toBe(401);
    expect(accepted(t)).toHaveLength(1);
    const refused = receiver.calls.slice(-2).map((c) => c.verdict);
    expect(refused).toEqual([
      { ok: false, reason: 'bad-signature' },
      { ok: false, reason: 'stale' },
    ]);
  });
});

describe('hostile jobs', () => {
  it('malformed payloads are dead-lettered, the worker keeps delivering, nothing is called for them', async () => {
    const t = tenant();
    const bad: Array<[string, Json]> = [
      ['notify:bad:1', null],
      ['notify:bad:2', { tenant: t, user: 'bob' }],
      ['notify:bad:3', { tenant: t, user: 'bob', entries: [] }],
      [
        'notify:bad:4',
        { tenant: t, user: 'bob', entries: [{ seq: '1', conv: { type: 'user', id: 'x' }, from: 'x', appinfo: 'a', mention: false }] },
      ],
      [
        'notify:bad:5',
        { tenant: t, user: 'bob', entries: [{ seq: 1, conv: { type: 'room', id: 'x' }, from: 'x', appinfo: 'a', mention: 'yes' }] },
      ],
      ['notify:bad:6', [1, 2, 3]],
    ];
    for (const [id, payload] of bad) await rig.queue.enqueue({ queue: OFFLINE_NOTIFY_QUEUE, id, payload });
    await eventually(
      'each tried',
      async () =>
        (await rig.engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE })).filter((j) => j.id.startsWith('notify:bad:') && j.attempts >= 1)
          .length === bad.length,
    );
    await eventually(
      'all dead-lettered',
      async () => (await rig.queue.deadLetters()).filter((j) => j.id.startsWith('notify:bad:')).length === bad.length,
      30_000,
    );
    const dead = (await rig.queue.deadLetters()).filter((j) => j.id.startsWith('notify:bad:'));
    expect(dead.every((j) => j.lastError === 'malformed offline notify job')).toBe(true);
    // The worker still runs: a genuine notification afterwards is delivered.
    await send(t, 'alice', 'carol');
    await eventually('a genuine one delivered', () => accepted(t).length === 1);
    expect(accepted(t)[0]?.user).toBe('carol');
    expect(attempts(t)).toBe(1);
  });

  it('a forged job for a tenant without a notify URL completes without a call', async () => {
    const before = receiver.calls.length;
    const item = { seq: 1, conv: { type: 'user', id: 'mallory' }, from: 'mallory', appinfo: 'a', mention: false };
    await rig.queue.enqueue({
      queue: OFFLINE_NOTIFY_QUEUE,
      id: 'notify:nourl:bob:1',
      payload: { tenant: 'nourl', user: 'bob', entries: [item] },
    });
    await eventually('the job done', async () =>
      (await rig.engine.jobs.list({ queue: OFFLINE_NOTIFY_QUEUE })).every((j) => j.id !== 'notify:nourl:bob:1'),
    );
    expect(receiver.calls.length).toBe(before);
  });
});
