/**
 * The per-user socket cap (Limits.perUserSockets, per gateway process): one token opening more
 * sockets than the cap keeps only the newest `cap` open; the oldest are closed with 4429. A cap
 * lowered live applies to the next connection. Other users are not touched.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sampleEntry } from './fake-messaging.ts';
import { eventually, startGateway, TestClient, TRANSPORTS, type Started } from './harness.ts';

const alice = { tenant: 't1', user: 'alice' };

describe.each(TRANSPORTS)('per-user socket cap (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  const openMany = async (n: number, user = 'alice'): Promise<TestClient[]> => {
    const token = await t.token(user);
    const sockets: TestClient[] = [];
    for (let i = 0; i < n; i++) sockets.push(await TestClient.connect(t.wsUrl(), { authorization: `Bearer ${token}` }));
    return sockets;
  };
  const isClosed = (c: TestClient) => Promise.race([c.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 200))]);

  it('cap + N sockets of one token: the N oldest are closed with 4429, the newest cap stay and are served', async () => {
    t = await startGateway(transport, { maxSocketsPerUser: 3 });
    const bob = await openMany(2, 'bob');
    const sockets = await openMany(5);
    for (const oldest of sockets.slice(0, 2)) expect(await oldest.closed).toEqual({ code: 4429, reason: 'too many sockets for this user' });
    for (const kept of sockets.slice(2)) {
      expect(await isClosed(kept)).toBe(false);
      expect(await kept.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    }
    await eventually(() => t.gateway.socketCount('t1', 'alice') === 3 && t.messaging.subscriberCount(alice) === 3);
    // One push reaches 3 sockets, not 5.
    t.messaging.push(alice, 0, [sampleEntry]);
    for (const kept of sockets.slice(2)) expect(await kept.nextPush()).toMatchObject({ op: 'push' });
    expect(t.gateway.socketCount('t1', 'bob')).toBe(2); // another user is not touched
    for (const b of bob) expect(await b.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
  });

  it('defaults to 20 per user', async () => {
    t = await startGateway(transport);
    const sockets = await openMany(22);
    for (const oldest of sockets.slice(0, 2)) expect((await oldest.closed).code).toBe(4429);
    await eventually(() => t.gateway.socketCount('t1', 'alice') === 20);
    expect(await isClosed(sockets[2]!)).toBe(false);
  });

  it('a cap lowered live applies to the next connection: it closes the oldest down to the new cap', async () => {
    let cap = 4;
    t = await startGateway(transport, { maxSocketsPerUser: () => cap });
    const first = await openMany(4);
    expect(t.gateway.socketCount('t1', 'alice')).toBe(4);
    cap = 2;
    expect(await isClosed(first[0]!)).toBe(false); // sockets already open stay until the next accept
    const [newest] = await openMany(1);
    for (const oldest of first.slice(0, 3)) expect((await oldest.closed).code).toBe(4429);
    await eventually(() => t.gateway.socketCount('t1', 'alice') === 2);
    expect(await first[3]!.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(await newest!.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    cap = 3;
    await openMany(2);
    await eventually(() => t.gateway.socketCount('t1', 'alice') === 3);
  });

  it('refuses a cap below 1 at start', async () => {
    await expect(startGateway(transport, { maxSocketsPerUser: 0 })).rejects.toThrow(RangeError);
    t = await startGateway(transport);
  });
});
