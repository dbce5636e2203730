/**
 * Bad frames are charged to their sender: every frame costs 1 + bytes/4096 rate-limit tokens,
 * taken before it is decoded, valid or not; a sender over its rate is answered RATE_LIMITED
 * without its frame being read; one the refusal rule closes (1008) — a streak of bad frames, or
 * its allowance of refusals spent, one valid frame now and then not resetting that — is held:
 * its frames, HTTP calls and upgrades are refused (429) until the hold ends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { frameCost, LocalHoldStore } from '@seqline/core';
import { leadingRequestId, SocketRefusals } from '../src/frame-charge.ts';
import { RateRefusalCache, TokenBucketRateLimiter } from '../src/rate-limit.ts';
import { HeldUsersFirst, UserHolds } from '../src/user-holds.ts';
import { delay, http, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

/** Valid UTF-8, JSON cut short: a parser reads all of it before failing. */
const badFrame = (id: number, bytes = 64 * 1024) => {
  const head = `{"id":${id},"op":"send","appinfo":"a","to":{"user":"bob"},"type":"t","body":"`;
  return head + 'x'.repeat(bytes - head.length);
};

describe('frame cost, the id of an unread frame, the refusal allowance', () => {
  it('costs 1 + floor(bytes / 4096)', () => {
    expect([frameCost(0), frameCost(4095), frameCost(4096), frameCost(64 * 1024), frameCost(66 * 1024)]).toEqual([1, 1, 2, 17, 17]);
  });

  it('reads a leading id from the first bytes only, else null', () => {
    const id = (text: string) => leadingRequestId(Buffer.from(text));
    expect([id('{"id":42,"op":"x"'), id(' { "id" : -7 }'), id('{"op":"x","id":1}'), id('{"id":"7"}'), id('garbage')]).toEqual([
      42,
      -7,
      null,
      null,
      null,
    ]);
    expect(id(`{"id":${'9'.repeat(17)},`)).toBeNull();
    const bytes = new TextEncoder().encode('{"id":3,');
    expect(leadingRequestId(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))).toBe(3);
  });

  it("a socket's refusals: spent by cost, refilled with time, closed and held past the allowance", () => {
    let now = 0;
    const refusals = new SocketRefusals(
      { maxConsecutiveBadFrames: 20, refusalAllowance: { burst: 20, perSecond: 10 }, holdMs: 700 },
      { now: () => now },
    );
    expect([refusals.charge('undecodable', 64 * 1024), refusals.charge('refused', 10), refusals.charge('refused', 10)]).toEqual([
      { action: 'continue' },
      { action: 'continue' },
      { action: 'continue' },
    ]);
    expect(refusals.charge('refused', 10)).toEqual({ action: 'continue' }); // 20th unit
    now += 100; // one unit back
    expect([refusals.charge('refused', 10), refusals.charge('refused', 10)]).toEqual([
      { action: 'continue' },
      { action: 'close-and-hold', reason: 'too many refused frames', holdMs: 700 },
    ]);
  });

  it('token buckets take a cost, at most the whole bucket', () => {
    const limiter = new TokenBucketRateLimiter({ perSecond: 0.001, burst: 20, clock: { now: () => 0 } });
    expect([limiter.take('u', 17), limiter.take('u', 4), limiter.take('u', 3), limiter.take('u')]).toEqual([true, false, true, false]);
    const small = new TokenBucketRateLimiter({ perSecond: 0.001, burst: 5, clock: { now: () => 0 } });
    expect([small.take('u', 65), small.take('u')]).toEqual([true, false]); // charged as the whole bucket
  });

  it('a refusal is cached: the limiter is not asked again (sync or async) until the cache ends', async () => {
    let now = 0;
    let calls = 0;
    let answer = false;
    const inner = {
      take: () => {
        calls++;
        return Promise.resolve(answer);
      },
    };
    const cached = new RateRefusalCache(inner, 50, { now: () => now });
    expect(await cached.take('u', 3)).toBe(false);
    expect([cached.take('u'), cached.take('u')]).toEqual([false, false]);
    expect(calls).toBe(1);
    now = 50;
    answer = true;
    expect(await cached.take('u')).toBe(true);
    expect(calls).toBe(2);
  });

  it('a held user is refused before the limiter is asked; others go to it', async () => {
    let now = 0;
    let calls = 0;
    const holds = new UserHolds({ local: new LocalHoldStore({ now: () => now }) });
    const limiter = new HeldUsersFirst(holds, { take: () => (calls++, true) });
    await holds.hold('t:mallory', 1000);
    await holds.hold('t:mallory', 10); // a shorter hold does not cut a longer one
    now = 999;
    expect([limiter.take('t:mallory', 17), limiter.take('t:bob')]).toEqual([false, true]);
    expect(calls).toBe(1);
    now = 1000;
    expect(limiter.take('t:mallory')).toBe(true);
    expect(new HeldUsersFirst(holds, null).take('t:anyone')).toBe(true); // no rate limit: only holds
  });
});

/** Upgrades until one is not refused 429, within `boundMs`; how long that took. */
async function untilUpgradeAccepted(url: string, token: string, boundMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const answer = await upgradeStatus(url, { authorization: `Bearer ${token}` });
    if (answer.status !== 429) {
      expect(answer.status).toBe(101);
      return Date.now() - started;
    }
    expect(Date.now() - started).toBeLessThan(boundMs);
    await delay(25);
  }
}

describe.each(TRANSPORTS)('bad frames are charged to their sender (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  it('64 KB of bad frames costs 17 tokens each; past the bucket they are RATE_LIMITED unread; others unaffected', async () => {
    t = await startGateway(transport, { rateLimit: { perSecond: 0.001, burst: 40 } });
    const mallory = await t.connect('mallory');
    const bob = await t.connect('bob');
    mallory.sendRaw(badFrame(1));
    expect(await mallory.nextReply(null)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } }); // read: cut short, no id
    mallory.sendRaw(badFrame(2));
    expect(await mallory.nextReply(null)).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    mallory.sendRaw(badFrame(3)); // 34 of 40 spent: 17 more do not fit
    expect(await mallory.nextReply(3)).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } }); // unread: id from its first bytes
    expect(await mallory.request('sync', { maxSeq: 0 })).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } }); // within the hold
    expect(await bob.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('send')).toHaveLength(0);
    expect(t.messaging.callsOf('sync').map((c) => c.caller.user)).toEqual(['bob']);
  });

  it('valid frames are charged by size too', async () => {
    t = await startGateway(transport, { rateLimit: { perSecond: 0.001, burst: 20 } });
    const c = await t.connect('alice');
    const body = 'y'.repeat(60 * 1024);
    const first = await c.request('send', { appinfo: 'big-1', to: { user: 'bob' }, type: 't', body });
    expect(first).toMatchObject({ ok: true });
    expect(await c.request('send', { appinfo: 'big-2', to: { user: 'bob' }, type: 't', body })).toMatchObject({
      ok: false,
      error: { code: 'RATE_LIMITED' },
    });
    expect(t.messaging.callsOf('send')).toHaveLength(1);
  });

  it('19 bad frames and 1 valid, again and again: closed with 1008, then held off (429) until the hold ends', async () => {
    t = await startGateway(transport, { rateLimit: { perSecond: 100, burst: 200 }, holdMs: 1500 });
    const mallory = await t.connect('mallory');
    const bob = await t.connect('bob');
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 19; i++) mallory.sendRaw(badFrame(i));
      mallory.sendRaw(JSON.stringify({ id: 1000 + round, op: 'sync', maxSeq: 0 }));
    }
    expect(await mallory.closed).toEqual({ code: 1008, reason: 'too many refused frames' });
    const token = await t.token('mallory');
    const refused = await upgradeStatus(t.wsUrl(), { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(await bob.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true }); // another user is served throughout
    expect(await untilUpgradeAccepted(t.wsUrl(), token, 5_000)).toBeGreaterThan(1000);
    const back = await TestClient.connect(t.wsUrl(), { authorization: `Bearer ${token}` });
    expect(await back.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('send')).toHaveLength(0);
    await back.close();
  });

  it('21 bad frames in a row: closed 1008 for the streak, then held like a spent allowance (429) until the hold ends', async () => {
    t = await startGateway(transport, { rateLimit: false, holdMs: 1500 });
    const mallory = await t.connect('mallory');
    const second = await t.connect('mallory'); // another socket of the same user, quiet
    const bob = await t.connect('bob');
    for (let i = 0; i < 21; i++) mallory.sendRaw('bad');
    expect(await mallory.closed).toEqual({ code: 1008, reason: 'too many bad frames' });
    const token = await t.token('mallory');
    const refused = await upgradeStatus(t.wsUrl(), { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    // Its other socket and its HTTP calls are held as well; another user is not.
    expect(await second.request('sync', { maxSeq: 0 })).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
    const call = await http(t.httpUrl('/v1/sync?maxSeq=0'), { headers: { authorization: `Bearer ${token}` } });
    expect(call.status).toBe(429);
    expect(await bob.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(await untilUpgradeAccepted(t.wsUrl(), token, 5_000)).toBeGreaterThan(1000);
    expect(await second.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('sync').map((c) => c.caller.user)).toEqual(['bob', 'mallory']);
    second.socket.terminate();
  });

  it('holdMs 0: the streak still closes the socket, and nobody is held', async () => {
    t = await startGateway(transport, { rateLimit: false, holdMs: 0, maxConsecutiveBadFrames: 2 });
    const mallory = await t.connect('mallory');
    for (let i = 0; i < 3; i++) mallory.sendRaw(Buffer.from([0xff, 0xfe, 0x00]));
    expect(await mallory.closed).toEqual({ code: 1008, reason: 'too many bad frames' });
    const back = await t.connect('mallory');
    expect(await back.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    await back.close();
  });

  it('frames that arrive after the verdict are not read: only the first 21 get an answer', async () => {
    t = await startGateway(transport, { rateLimit: false });
    const mallory = await t.connect('mallory');
    let answers = 0;
    mallory.socket.on('message', () => answers++);
    for (let i = 0; i < 40; i++) mallory.sendRaw('bad');
    expect((await mallory.closed).code).toBe(1008);
    expect(answers).toBe(21);
  });
});
