/**
 * The login policy across two gateways over real NATS (the device bus), each with its own
 * connection; one gateway's connection may run through a proxy that holds what it sends (a
 * slow gateway), or be closed (NATS down for that gateway). The shared server is never stopped.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNatsDeviceBus, type NatsDeviceBus } from '@seqline/bus';
import type { LoginPolicy, Platform } from '@seqline/core';
import { delayingProxy, eventually, requireServices, uniqueName, type DelayingProxy } from '@seqline/testing';
import { ClientSession } from '../src/client-session.ts';
import { issueToken } from '../src/index.ts';
import { delay, memoryLogger, SECRET, startGateway, TestClient, type Started } from './harness.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const probe = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false }).then(
  async (nc) => (await nc.close(), { ok: true as const }),
  (err: unknown) => ({ ok: false as const, reason: `no NATS at ${NATS_URL}: ${String(err)}` }),
);

interface Gw extends Started {
  bus: NatsDeviceBus;
  busLog: ReturnType<typeof memoryLogger>;
  proxy: DelayingProxy;
}

if (requireServices(probe, 'devices across gateways', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  describe('login policy across two gateways (NATS device bus)', () => {
    let policy: LoginPolicy = 'one-per-platform';
    const gateways: Gw[] = [];
    const conns: NatsConnection[] = [];
    const proxies: DelayingProxy[] = [];
    const clients: TestClient[] = [];
    afterEach(async () => {
      vi.restoreAllMocks();
      for (const c of clients.splice(0)) c.socket.terminate();
      for (const g of gateways.splice(0)) await g.gateway.close();
      for (const nc of conns.splice(0)) await nc.close();
      for (const p of proxies.splice(0)) await p.close();
    });

    /** g1 and g2, each on its own connection through a proxy; `down` names a gateway whose connection is closed. */
    const twoGateways = async (p: LoginPolicy, down?: 'g1') => {
      policy = p;
      const root = uniqueName('dev');
      const server = new URL(NATS_URL);
      for (const name of ['g1', 'g2']) {
        const proxy = await delayingProxy({ host: server.hostname, port: Number(server.port || 4222) });
        proxies.push(proxy);
        const nc = await connect({ servers: proxy.url, name });
        if (down === name) await nc.close();
        else conns.push(nc);
        const busLog = memoryLogger();
        let bus: NatsDeviceBus | undefined;
        const started = await startGateway('ws', {
          gatewayId: name,
          loginPolicyOf: () => policy,
          deviceBus: (holder) =>
            (bus = createNatsDeviceBus(nc, holder, { root, logger: busLog, presenceHeartbeatMs: 100, followPresence: true })),
        });
        gateways.push({ ...started, bus: bus!, busLog, proxy });
      }
      return { root, g1: gateways[0]!, g2: gateways[1]! };
    };
    /** Until `g`'s presence is trusted and shows `count` other gateways holding alice. */
    const knows = (g: Gw, count: number) => eventually(() => (g.bus.gatewaysHolding('t1', 'alice')?.length ?? -1) >= count, 10_000);
    const login = async (g: Started, plat?: Platform, dev?: string) => {
      const token = await issueToken({
        secret: SECRET,
        user: 'alice',
        tenant: 't1',
        ttlSeconds: 600,
        ...(plat ? { plat } : {}),
        ...(dev ? { dev } : {}),
      });
      const c = await TestClient.connect(g.wsUrl(), { authorization: `Bearer ${token}` });
      clients.push(c);
      return c;
    };
    /** performance.now() of the first frame with `op`. */
    const frameAt = (c: TestClient, op: string) =>
      new Promise<number>((resolve) =>
        c.socket.on('message', (d) => {
          if ((JSON.parse(d.toString()) as { op?: string }).op === op) resolve(performance.now());
        }),
      );

    it('a second ios login on the other gateway kicks the first: in-flight answered, kicked frame, 4409, then the new one is served', async () => {
      const { g1, g2 } = await twoGateways('one-per-platform');
      const first = await login(g1, 'ios', 'phone-1');
      const seen: string[] = [];
      first.socket.on('message', (d) => {
        const f = JSON.parse(d.toString()) as { op?: string; id?: number };
        seen.push(f.op ?? `reply:${f.id}`);
      });
      const release = g1.messaging.block('send');
      const inFlight = first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
      await eventually(() => g1.messaging.callsOf('send').length === 1); // in Messaging, not only admitted
      await knows(g2, 1);
      const second = await login(g2, 'ios', 'phone-2');
      const served = second.request('sync', { maxSeq: 0, limit: 1 });
      await delay(200);
      expect(g2.messaging.callsOf('sync')).toHaveLength(0); // waits for the kick on g1
      release();
      expect((await inFlight).ok).toBe(true);
      expect((await first.closed).code).toBe(4409);
      expect((await served).ok).toBe(true);
      expect(seen).toEqual(['reply:1', 'kicked']);
    });

    it('a gateway that answers after 300 ms is waited for: the new socket is served only after the old one was told', async () => {
      const { g1, g2 } = await twoGateways('one-per-platform');
      const first = await login(g2, 'ios', 'phone-1');
      const kickedAt = frameAt(first, 'kicked');
      const release = g2.messaging.block('send'); // the old session drains a request first
      void first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
      await eventually(() => g2.messaging.callsOf('send').length === 1);
      await knows(g1, 1);
      g2.proxy.delayMs = 300; // g2 answers (and tells) 300 ms late
      const second = await login(g1, 'ios', 'phone-2');
      const served = second.request('sync', { maxSeq: 0, limit: 1 }).then((r) => ({ ok: r.ok, at: performance.now() }));
      await delay(400);
      release();
      const { ok, at } = await served;
      expect(ok).toBe(true);
      expect(await kickedAt).toBeLessThanOrEqual(at);
      expect((await first.closed).code).toBe(4409);
    });

    it('NATS down on this gateway (a closed connection): its own older sessions are still displaced, the new one served', async () => {
      const { g1 } = await twoGateways('one-per-platform', 'g1');
      const first = await login(g1, 'ios', 'phone-1');
      const web = await login(g1, 'web');
      const second = await login(g1, 'ios', 'phone-2');
      expect((await second.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect((await first.closed).code).toBe(4409);
      expect(web.socket.readyState).toBe(1);
      expect(g1.busLog.records.some((r) => r.level === 'warn' && /unreachable|cannot answer/.test(r.msg ?? ''))).toBe(true);
    });

    it('a kick that rejects on the other gateway is logged there; the new login is served, nothing crashes', async () => {
      const { g1, g2 } = await twoGateways('one');
      await login(g1, 'ios');
      await knows(g2, 1);
      vi.spyOn(ClientSession.prototype, 'kick').mockRejectedValueOnce(new Error('socket gone while telling'));
      const second = await login(g2, 'web');
      expect((await second.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      await eventually(() =>
        g1.busLog.records.some((r) => r.level === 'error' && r.msg === 'device bus: a displaced session was not told'),
      );
    });

    it('a web login on the other gateway kicks nobody and is served without waiting out the bound', async () => {
      const { g1, g2 } = await twoGateways('one-per-platform');
      const ios = await login(g1, 'ios');
      await knows(g2, 1);
      const web = await login(g2, 'web');
      const started = Date.now();
      expect((await web.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
      await delay(100);
      expect(ios.socket.readyState).toBe(1);
    });

    it('one kicks the sessions on both gateways; a first login with nobody else holding the user is served at once', async () => {
      const { g1, g2 } = await twoGateways('one');
      await eventually(() => g1.bus.stats().presence?.ready === true && g2.bus.stats().presence?.ready === true, 10_000);
      const started = Date.now();
      const a = await login(g1, 'ios');
      expect((await a.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
      const b = await login(g2, 'web');
      await knows(g2, 1);
      const c = await login(g2, 'desktop');
      expect((await c.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect((await a.closed).code).toBe(4409);
      expect((await b.closed).code).toBe(4409);
    });

    it('all kicks nobody across gateways', async () => {
      const { g1, g2 } = await twoGateways('all');
      const a = await login(g1, 'ios', 'same');
      const b = await login(g2, 'ios', 'same');
      expect((await b.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      await delay(100);
      expect(a.socket.readyState).toBe(1);
    });

    it('malformed, forged or foreign requests and kicks on the bus are ignored; the gateway keeps serving', async () => {
      const { root, g1, g2 } = await twoGateways('one');
      const a = await login(g1, 'ios');
      await knows(g2, 1); // g1's subscriptions are in place (announced after them)
      const nc = conns[1]!;
      const subject = `${root}.${Buffer.from('t1').toString('base64url')}.${Buffer.from('alice').toString('base64url')}`;
      const kickSubject = `${root}.gw.${g1.bus.id}.kick`;
      const incoming = { session: 'x', since: Date.now() + 1e6, gateway: 'evil' };
      for (const body of [
        'not json',
        '[]',
        '{"op":"pick"}',
        JSON.stringify({ op: 'pick', from: 'evil', tenant: 't1', user: 'mallory', policy: 'one', incoming }),
        JSON.stringify({ op: 'pick', from: 'evil', tenant: 't1', user: 'alice', policy: 'none', incoming }),
        JSON.stringify({ op: 'displace', tenant: 't1', user: 'alice', policy: 'one', incoming }),
      ]) {
        nc.publish(subject, body, { reply: `${root}.nobody` });
      }
      for (const body of [
        'not json',
        JSON.stringify({ from: 'evil', tenant: 't1', user: 'alice', incoming, sessions: 'all' }),
        JSON.stringify({ from: 'evil', tenant: 't1', user: 'alice', incoming: { session: 'x' }, sessions: [] }),
        JSON.stringify({ from: 'evil', tenant: 't1', user: 'alice', incoming, sessions: Array.from({ length: 1001 }, (_, i) => `s${i}`) }),
      ]) {
        nc.publish(kickSubject, body, { reply: `${root}.nobody` });
      }
      await nc.flush();
      await delay(200);
      expect(a.socket.readyState).toBe(1);
      expect((await a.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect(g1.busLog.records.filter((r) => /malformed/.test(r.msg ?? '')).length).toBeGreaterThanOrEqual(8);
    });
  });
}
