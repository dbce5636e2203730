/**
 * Bad frames are charged to their sender: every frame costs 1 + bytes/4096 rate-limit tokens,
 * taken before it is decoded, valid or not; a sender over its rate is answered RATE_LIMITED
 * without its frame being read; one that keeps being refused is closed (1008) and held off
 * (its upgrades answered 429) for a while — one valid frame now and then does not reset that.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { frameCost, leadingRequestId, RefusalBudget } from '../src/frame-charge.ts';
import { Holds, RefusalHold, TokenBucketRateLimiter } from '../src/rate-limit.ts';
import { delay, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

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

  it('a refusal allowance spends by cost and refills with time', () => {
    let now = 0;
    const budget = new RefusalBudget({ burst: 20, perSecond: 10 }, { now: () => now });
    expect([budget.spend(17), budget.spend(3), budget.spend(1)]).toEqual([true, true, false]);
    now += 100;
    expect([budget.spend(1), budget.spend(1)]).toEqual([true, false]);
  });

  it('token buckets take a cost, at most the whole bucket', () => {
    const limiter = new TokenBucketRateLimiter({ perSecond: 0.001, burst: 20, clock: { now: () => 0 } });
    expect([limiter.take('u', 17), limiter.take('u', 4), limiter.take('u', 3), limiter.take('u')]).toEqual([true, false, true, false]);
    const small = new TokenBucketRateLimiter({ perSecond: 0.001, burst: 5, clock: { now: () => 0 } });
    expect([small.take('u', 65), small.take('u')]).toEqual([true, false]); // charged as the whole bucket
  });

  it('a refusal is held: the limiter is not asked again (sync or async) until the hold ends', async () => {
    let now = 0;
    let calls = 0;
    let answer = false;
    const inner = {
      take: () => {
        calls++;
        return Promise.resolve(answer);
      },
    };
    const held = new RefusalHold(inner, 50, { now: () => now });
    expect(await held.take('u', 3)).toBe(false);
    expect([held.take('u'), held.take('u')]).toEqual([false, false]);
    expect(calls).toBe(1);
    now = 50;
    answer = true;
    expect(await held.take('u')).toBe(true);
    held.hold('u', 1000);
    held.hold('u', 10); // a shorter hold does not cut a longer one
    now = 1049;
    expect(held.take('u')).toBe(false);
    expect(calls).toBe(2);
  });

  it('holds are bounded in number: the oldest go first', () => {
    const holds = new Holds({ now: () => 0 }, 2);
    holds.hold('a', 100);
    holds.hold('b', 100);
    holds.hold('c', 100);
    expect(['a', 'b', 'c'].map((k) => holds.isHeld(k))).toEqual([false, true, true]);
  });
});

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
    t = await startGateway(transport, { rateLimit: { perSecond: 100, burst: 200 }, abuseHoldMs: 1500 });
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
    await delay(1600);
    const back = await TestClient.connect(t.wsUrl(), { authorization: `Bearer ${token}` });
    expect(await back.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('send')).toHaveLength(0);
    await back.close();
  });
});
