/**
 * The hold across two gateways sharing a live Redis (RedisHoldStore, each gateway with its own
 * connection and the same key prefix, as two gateway processes have): a user the refusal rule
 * closed on g1 who reconnects through g2 is still held there until the hold ends — the socket
 * opens, nothing it sends is served, it is closed 1008, and g2 then refuses its upgrades (429)
 * itself. With Redis unreachable the hold fails open, as the rate limiter does.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createCacheRedisClient, RedisHoldStore } from '@seqline/cache';
import { freePort, requireServices } from '@seqline/testing';
import { delay, startGateway, TestClient, upgradeStatus, type Started } from './harness.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const probe = await (async () => {
  const redis = createCacheRedisClient({ url: REDIS_URL });
  try {
    await waitReady(redis, 3000);
    await redis.ping();
    return { ok: true as const };
  } catch (err) {
    return { ok: false as const, reason: `no Redis at ${REDIS_URL}: ${String(err)}` };
  } finally {
    redis.disconnect();
  }
})();

function waitReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis not ready after ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', () => (clearTimeout(timer), resolve()));
  });
}

const HOLD_MS = 1500;

if (requireServices(probe, 'holds across gateways', 'a Redis server', 'start one with scripts/services.sh up or set REDIS_URL')) {
  describe('the hold across two gateways (live Redis)', () => {
    const keyPrefix = `seqline-test:${randomBytes(5).toString('hex')}:`;
    const gateways: Started[] = [];
    const clients: Redis[] = [];
    const sockets: TestClient[] = [];
    afterEach(async () => {
      for (const s of sockets.splice(0)) s.socket.terminate();
      for (const g of gateways.splice(0)) await g.gateway.close();
      for (const c of clients.splice(0)) c.disconnect();
    });
    afterAll(async () => {
      const redis = createCacheRedisClient({ url: REDIS_URL });
      await waitReady(redis, 5000);
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });

    /** A gateway whose holds live in Redis at `url` (its own connection). */
    const gatewayOn = async (url = REDIS_URL) => {
      const redis = createCacheRedisClient({ url });
      clients.push(redis);
      if (url === REDIS_URL) await waitReady(redis, 5000);
      const started = await startGateway('ws', { rateLimit: false, holdMs: HOLD_MS, holdStore: new RedisHoldStore({ redis, keyPrefix }) });
      gateways.push(started);
      return started;
    };
    const connect = async (g: Started, user: string) => {
      const c = await TestClient.connect(g.wsUrl(), { authorization: `Bearer ${await g.token(user)}` });
      sockets.push(c);
      return c;
    };
    /** Every frame `c` receives from now on. */
    const framesOf = (c: TestClient) => {
      const frames: Array<{ ok?: boolean }> = [];
      c.socket.on('message', (d) => frames.push(JSON.parse(d.toString()) as { ok?: boolean }));
      return frames;
    };
    /** Closed by the streak on `g`: 21 bad frames in a row. */
    const floodBadFrames = async (g: Started, user: string) => {
      const c = await connect(g, user);
      for (let i = 0; i < 21; i++) c.sendRaw('bad');
      expect(await c.closed).toEqual({ code: 1008, reason: 'too many bad frames' });
    };

    it('held on g1, reconnecting through g2: nothing served, closed 1008, then refused 429 until the hold ends', async () => {
      const [g1, g2] = [await gatewayOn(), await gatewayOn()];
      const user = `mallory-${randomBytes(3).toString('hex')}`;
      const heldAt = Date.now();
      await floodBadFrames(g1, user);
      // At once through g2, a request sent before anything could be answered.
      const again = await connect(g2, user);
      const frames = framesOf(again);
      void again.request('sync', { maxSeq: 0 });
      expect(await again.closed).toEqual({ code: 1008, reason: 'held after too many refused frames; reconnect later' });
      expect(frames.filter((f) => f.ok === true)).toEqual([]);
      expect(g2.messaging.callsOf('sync')).toHaveLength(0);
      // g2 now knows the hold itself: its upgrades are refused, as g1's are.
      const token = await g2.token(user);
      for (const g of [g2, g1]) expect((await upgradeStatus(g.wsUrl(), { authorization: `Bearer ${token}` })).status).toBe(429);
      // Another user is served through both.
      for (const g of [g1, g2]) expect(await (await connect(g, 'bob')).request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
      // Until the hold ends (asked, bounded), then served through g2.
      while ((await upgradeStatus(g2.wsUrl(), { authorization: `Bearer ${token}` })).status === 429) {
        expect(Date.now() - heldAt).toBeLessThan(HOLD_MS + 5_000);
        await delay(25);
      }
      expect(Date.now() - heldAt).toBeGreaterThanOrEqual(HOLD_MS - 100);
      expect(await (await connect(g2, user)).request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
      expect(g2.messaging.callsOf('sync').map((c) => c.caller.user)).toEqual(['bob', user]);
    });

    it('a gateway that never saw the user learns the hold at the socket open, before serving anything', async () => {
      const [g1, g2] = [await gatewayOn(), await gatewayOn()];
      const user = `mallory-${randomBytes(3).toString('hex')}`;
      await floodBadFrames(g1, user);
      // Many frames in the first packet: none is served.
      const again = await connect(g2, user);
      const frames = framesOf(again);
      for (let i = 0; i < 20; i++) void again.request('send', { appinfo: `x${i}`, to: { user: 'bob' }, type: 't', body: {} });
      expect((await again.closed).code).toBe(1008);
      expect(frames.filter((f) => f.ok === true)).toEqual([]);
      expect(g2.messaging.callsOf('send')).toHaveLength(0);
    });

    it('Redis unreachable: the hold fails open across gateways (g1 still holds locally)', async () => {
      const g1 = await gatewayOn(`redis://127.0.0.1:${await freePort()}`);
      const g2 = await gatewayOn(`redis://127.0.0.1:${await freePort()}`);
      const user = `mallory-${randomBytes(3).toString('hex')}`;
      await floodBadFrames(g1, user);
      const token = await g1.token(user);
      expect((await upgradeStatus(g1.wsUrl(), { authorization: `Bearer ${token}` })).status).toBe(429);
      expect(await (await connect(g2, user)).request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    });
  });
}
