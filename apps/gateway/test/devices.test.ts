/** The login policy on one gateway: who a new login displaces, and that it is told first. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LoginPolicy, Platform } from '@seqline/core';
import { ClientSession } from '../src/client-session.ts';
import { issueToken } from '../src/index.ts';
import { delay, eventually, SECRET, startGateway, TestClient, TRANSPORTS, type Started } from './harness.ts';

interface Device {
  dev?: string;
  plat?: Platform;
}

describe.each(TRANSPORTS)('login policy on one gateway (%s)', (transport) => {
  let t: Started;
  let policy: LoginPolicy = 'all';
  const open: TestClient[] = [];
  const start = async (p: LoginPolicy) => {
    policy = p;
    t = await startGateway(transport, { loginPolicyOf: () => policy, kickDrainMs: 5000 });
  };
  const login = async (device: Device, user = 'alice', tenant = 't1') => {
    const token = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 600, ...device });
    const client = await TestClient.connect(t.wsUrl(), { authorization: `Bearer ${token}` });
    open.push(client);
    return client;
  };
  /** Resolves with the close if the socket closes within `ms`, else null. */
  const closedWithin = (c: TestClient, ms: number) => Promise.race([c.closed, delay(ms).then(() => null)]);
  /** Frames in arrival order, kicked and close included. */
  const trace = (c: TestClient) => {
    const seen: string[] = [];
    c.socket.on('message', (data) => {
      const f = JSON.parse(data.toString()) as { op?: string; id?: number; ok?: boolean };
      seen.push(f.op ?? `reply:${f.id}:${f.ok}`);
    });
    void c.closed.then(({ code }) => seen.push(`close:${code}`));
    return seen;
  };

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const c of open.splice(0)) c.socket.terminate();
    await t.gateway.close();
  });

  it('one-per-platform: a second ios login kicks the first after its in-flight request answered, and is served only after', async () => {
    await start('one-per-platform');
    const first = await login({ dev: 'phone-1', plat: 'ios' });
    const firstFrames = trace(first);
    const release = t.messaging.block('send');
    const inFlight = first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
    await eventually(() => t.messaging.callsOf('send').length === 1); // in Messaging, not only admitted
    const second = await login({ dev: 'phone-2', plat: 'ios' });
    const served = second.request('sync', { maxSeq: 0, limit: 10 });
    await delay(300);
    // The kick waits for the first socket's send; the new socket's sync waits for the kick.
    expect(t.messaging.callsOf('sync')).toHaveLength(0);
    const refused = await first.request('sync', { maxSeq: 0, limit: 10 });
    expect(refused.error).toEqual({ code: 'UNAUTHORIZED', message: 'session replaced by another login' });
    release();
    expect((await inFlight).ok).toBe(true);
    expect(await first.closed).toEqual({ code: 4409, reason: 'session replaced by another login' });
    expect((await served).ok).toBe(true);
    expect(firstFrames).toEqual(['reply:2:false', 'reply:1:true', 'kicked', 'close:4409']);
    expect(t.messaging.callsOf('sync').map((c) => c.caller.user)).toEqual(['alice']);
  });

  it('the kicked frame names the new device', async () => {
    await start('one-per-platform');
    const first = await login({ dev: 'phone-1', plat: 'ios' });
    const kicked = new Promise((resolve) => first.socket.on('message', (d) => resolve(JSON.parse(d.toString()))));
    await login({ dev: 'phone-2', plat: 'ios' });
    expect(await kicked).toEqual({ op: 'kicked', by: { dev: 'phone-2', plat: 'ios' } });
  });

  it('one-per-platform: a web login leaves the ios one; a login without a platform displaces only its own device', async () => {
    await start('one-per-platform');
    const ios = await login({ dev: 'phone', plat: 'ios' });
    const web = await login({ dev: 'browser', plat: 'web' });
    expect((await web.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    const bare = await login({});
    expect((await bare.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect(await closedWithin(ios, 200)).toBeNull();
    expect(await closedWithin(web, 0)).toBeNull();
    // The same device reconnecting replaces its older socket.
    const again = await login({ dev: 'browser' });
    expect((await web.closed).code).toBe(4409);
    expect((await again.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect(await closedWithin(ios, 100)).toBeNull();
    expect(t.gateway.socketCount('t1', 'alice')).toBe(3);
  });

  it('one: a login kicks every other session of the user, and only of that user and tenant', async () => {
    await start('one');
    const olds = [await login({ plat: 'ios' }), await login({ plat: 'web' }), await login({})];
    const bob = await login({ plat: 'ios' }, 'bob');
    const otherTenant = await login({ plat: 'ios' }, 'alice', 't2');
    const latest = await login({ dev: 'pc', plat: 'desktop' });
    expect((await latest.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    for (const old of olds) expect((await old.closed).code).toBe(4409);
    expect(await closedWithin(bob, 100)).toBeNull();
    expect(await closedWithin(otherTenant, 0)).toBeNull();
  });

  it('all (the default): nobody is kicked', async () => {
    await start('all');
    const a = await login({ dev: 'phone', plat: 'ios' });
    const b = await login({ dev: 'phone', plat: 'ios' });
    expect((await b.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect((await a.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect(await closedWithin(a, 100)).toBeNull();
  });

  it('the policy is read live at each login', async () => {
    await start('all');
    const a = await login({ plat: 'ios' });
    policy = 'one';
    await login({ plat: 'android' });
    expect((await a.closed).code).toBe(4409);
  });

  it('logins in one millisecond: each newer ios login signs out the one before, never the reverse', async () => {
    await start('one-per-platform');
    vi.spyOn(Date, 'now').mockReturnValue(Date.now()); // every login of this test lands in the same ms
    let previous = await login({ dev: 'phone-0', plat: 'ios' });
    for (let i = 1; i <= 12; i++) {
      const next = await login({ dev: `phone-${i}`, plat: 'ios' });
      expect((await next.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect((await closedWithin(previous, 2000))?.code).toBe(4409);
      previous = next;
    }
    expect(await closedWithin(previous, 100)).toBeNull();
  });

  it('a kick that rejects is logged and counted; the new login is served all the same', async () => {
    await start('one-per-platform');
    await login({ dev: 'phone-1', plat: 'ios' });
    vi.spyOn(ClientSession.prototype, 'kick').mockRejectedValueOnce(new Error('socket gone while telling'));
    const second = await login({ dev: 'phone-2', plat: 'ios' });
    expect((await second.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect(t.logger.records.some((r) => r.level === 'error' && r.msg === 'displacing sessions failed')).toBe(true);
    const counted = await t.gateway.metrics.getSingleMetricAsString('seqline_gateway_login_displacements_total');
    expect(counted).toContain('outcome="failed"} 1');
  });

  it('a kicked session that does not drain in time is told at the bound', async () => {
    policy = 'one';
    t = await startGateway(transport, { loginPolicyOf: () => policy, kickDrainMs: 200 });
    const first = await login({ plat: 'ios' });
    const release = t.messaging.block('send');
    void first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
    await delay(50);
    const started = Date.now();
    const second = await login({ plat: 'ios' });
    expect((await second.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    expect((await first.closed).code).toBe(4409);
    expect(Date.now() - started).toBeLessThan(2000);
    release();
  });
});
