/**
 * The after-send stream over the real embedded engine and a real HTTP receiver that checks
 * every signature: one call per stored message, retried while the receiver fails, dead-lettered
 * past the retry window (a short one here) and replayed; the settings read when a job runs.
 * The receiver's own check refuses a tampered body and a replayed old call.
 */
import { afterSendJobId, inboxKey, type TenantHooks } from '@seqline/core';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '@seqline/hooks';
import { startHookReceiver, type HookReceiver, type ReceivedHookCall } from '@seqline/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AFTER_SEND_QUEUE, createMessaging, startWorkers, type Messaging, type Workers } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

const SECRET = 'after-send-secret-0123456789';
const GIVE_UP_MS = 1_500;
let rig: EmbeddedRig;
let messaging: Messaging;
let workers: Workers;
let receiver: HookReceiver;
let receiverSkewMs = 0;
const hooks: Record<string, TenantHooks> = {};
const alice = { tenant: 't', user: 'alice' };
let n = 0;
const app = () => `as-${++n}`;

beforeAll(async () => {
  receiver = await startHookReceiver({ secret: SECRET, now: () => Date.now() + receiverSkewMs });
  hooks.t = { secret: SECRET, afterSendUrl: receiver.url };
  rig = await openEmbeddedRig('after-send', { hooks, backoff: { initialMs: 20, maxMs: 100, giveUpAfterMs: GIVE_UP_MS } });
  messaging = createMessaging(rig.deps);
  workers = await startWorkers(rig.deps);
  await messaging.createGroup(alice, { name: 'pair', id: 'pair', members: ['bo'] });
});
afterAll(async () => {
  workers.stop();
  await rig.close();
  await receiver.close();
});

const appinfoOf = (c: ReceivedHookCall) => (c.json as { appinfo?: string } | undefined)?.appinfo;
const callsFor = (a: string) => receiver.calls.filter((c) => appinfoOf(c) === a);
const acceptedFor = (a: string) => receiver.accepted().filter((c) => appinfoOf(c) === a);

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('after-send', () => {
  it('each stored message (1:1, group) reaches a healthy receiver once, signed, with the sender copy seq', async () => {
    receiver.setMode({ kind: 'ok' });
    const sends = [
      { appinfo: app(), to: { user: 'bo' } },
      { appinfo: app(), to: { user: 'alice' } },
      { appinfo: app(), to: { group: 'pair' } },
    ];
    const seqs = new Map<string, number>();
    for (const s of sends) seqs.set(s.appinfo, (await messaging.send(alice, { ...s, type: 'text', body: { a: s.appinfo } })).seq);
    await until('every call', () => sends.every((s) => acceptedFor(s.appinfo).length > 0));
    await new Promise((r) => setTimeout(r, 200));
    for (const s of sends) {
      const calls = callsFor(s.appinfo);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.verdict).toEqual({ ok: true });
      expect(calls[0]!.json).toEqual({
        type: 'after_send',
        tenant: 't',
        from: 'alice',
        to: s.to,
        appinfo: s.appinfo,
        seq: seqs.get(s.appinfo),
        sendTime: expect.any(Number),
        msgType: 'text',
        body: { a: s.appinfo },
      });
    }
    const own = await rig.engine.timeline.readAfter({ inbox: inboxKey('t', 'alice'), afterSeq: 0, limit: 100 });
    for (const s of sends) expect(own.find((e) => e.appinfo === s.appinfo)?.seq).toBe(seqs.get(s.appinfo));
  });

  it('is retried while the receiver answers 500, then delivered', async () => {
    receiver.setMode({ kind: 'status', status: 500 });
    const a = app();
    await messaging.send(alice, { appinfo: a, to: { user: 'bo' }, type: 'text', body: {} });
    await until('three failed tries', () => callsFor(a).length >= 3);
    receiver.setMode({ kind: 'ok' });
    await until('delivery', () => acceptedFor(a).length === 1);
    expect((await rig.queue.deadLetters()).map((j) => j.id)).not.toContain(afterSendJobId({ tenant: 't', sender: 'alice', appinfo: a }));
  });

  it('is dead-lettered past the retry window, and delivered once replayed', async () => {
    receiver.setMode({ kind: 'status', status: 500 });
    const a = app();
    await messaging.send(alice, { appinfo: a, to: { user: 'bo' }, type: 'text', body: {} });
    const id = afterSendJobId({ tenant: 't', sender: 'alice', appinfo: a });
    await until('the dead letter', async () => (await rig.queue.deadLetters()).some((j) => j.id === id), GIVE_UP_MS + 20_000);
    const tries = callsFor(a).length;
    expect(tries).toBeGreaterThan(2);
    expect(acceptedFor(a)).toHaveLength(0);
    receiver.setMode({ kind: 'ok' });
    await new Promise((r) => setTimeout(r, 200));
    expect(callsFor(a)).toHaveLength(tries);
    expect(await rig.queue.replay(id)).toBe(true);
    await until('the replayed delivery', () => acceptedFor(a).length === 1);
    expect((await rig.queue.deadLetters()).some((j) => j.id === id)).toBe(false);
  });

  it('reads the settings when the job runs: a URL removed meanwhile completes the job without a call', async () => {
    receiver.setMode({ kind: 'status', status: 503 });
    const a = app();
    await messaging.send(alice, { appinfo: a, to: { user: 'bo' }, type: 'text', body: {} });
    await until('a failed try', () => callsFor(a).length >= 1);
    hooks.t = { secret: SECRET };
    try {
      await until('the job done', () => {
        const s = rig.queue.stats()[AFTER_SEND_QUEUE];
        return s !== undefined && s.running + s.waiting + s.delayed === 0;
      });
      const seen = callsFor(a).length;
      receiver.setMode({ kind: 'ok' });
      await new Promise((r) => setTimeout(r, 300));
      expect(callsFor(a)).toHaveLength(seen);
      expect((await rig.queue.deadLetters()).some((j) => j.id === afterSendJobId({ tenant: 't', sender: 'alice', appinfo: a }))).toBe(
        false,
      );
      // And without a URL at send time, no job at all.
      const items = workers.stats().pools.afterSend.items;
      await messaging.send(alice, { appinfo: app(), to: { user: 'bo' }, type: 'text', body: {} });
      await new Promise((r) => setTimeout(r, 200));
      expect(workers.stats().pools.afterSend.items).toBe(items);
    } finally {
      hooks.t = { secret: SECRET, afterSendUrl: receiver.url };
    }
  });

  it("the receiver's check refuses a tampered body and a replayed old call", async () => {
    receiver.setMode({ kind: 'ok' });
    const a = app();
    await messaging.send(alice, { appinfo: a, to: { user: 'bo' }, type: 'text', body: { amount: 1 } });
    await until('delivery', () => acceptedFor(a).length === 1);
    const original = acceptedFor(a)[0]!;
    const headers = {
      'content-type': 'application/json',
      [TIMESTAMP_HEADER]: original.headers[TIMESTAMP_HEADER] ?? '',
      [SIGNATURE_HEADER]: original.headers[SIGNATURE_HEADER] ?? '',
    };
    const tampered = await fetch(receiver.url, { method: 'POST', headers, body: original.rawBody.replace('"amount":1', '"amount":9') });
    expect(tampered.status).toBe(401);
    receiverSkewMs = 10 * 60_000;
    try {
      const replayed = await fetch(receiver.url, { method: 'POST', headers, body: original.rawBody });
      expect(replayed.status).toBe(401);
    } finally {
      receiverSkewMs = 0;
    }
    expect(receiver.calls.slice(-2).map((c) => c.verdict)).toEqual([
      { ok: false, reason: 'bad-signature' },
      { ok: false, reason: 'stale' },
    ]);
    expect(acceptedFor(a)).toHaveLength(1);
  });
});
