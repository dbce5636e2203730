/** The login policy across two gateways over real NATS (the device bus), each with its own connection. */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createNatsDeviceBus } from '@seqline/bus';
import type { LoginPolicy, Platform } from '@seqline/core';
import { requireServices, uniqueName } from '@seqline/testing';
import { issueToken } from '../src/index.ts';
import { delay, SECRET, startGateway, TestClient, type Started } from './harness.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const probe = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false }).then(
  async (nc) => (await nc.close(), { ok: true as const }),
  (err: unknown) => ({ ok: false as const, reason: `no NATS at ${NATS_URL}: ${String(err)}` }),
);

if (requireServices(probe, 'devices across gateways', 'a NATS server', 'start one with scripts/services.sh up or set NATS_URL')) {
  describe('login policy across two gateways (NATS device bus)', () => {
    let policy: LoginPolicy = 'one-per-platform';
    const gateways: Started[] = [];
    const conns: NatsConnection[] = [];
    const clients: TestClient[] = [];
    afterEach(async () => {
      for (const c of clients.splice(0)) c.socket.terminate();
      for (const g of gateways.splice(0)) await g.gateway.close();
      for (const nc of conns.splice(0)) await nc.close();
    });

    const twoGateways = async (p: LoginPolicy) => {
      policy = p;
      const root = uniqueName('dev');
      for (const name of ['g1', 'g2']) {
        const nc = await connect({ servers: NATS_URL, name });
        conns.push(nc);
        gateways.push(
          await startGateway('ws', {
            gatewayId: name,
            loginPolicyOf: () => policy,
            deviceBus: (holder) => createNatsDeviceBus(nc, holder, { root, logger: gateways[0]?.logger ?? silent }),
          }),
        );
      }
      return { root, g1: gateways[0]!, g2: gateways[1]! };
    };
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
      await until(() => g1.messaging.callsOf('send').length === 1); // in Messaging, not only admitted
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

    it('a web login on the other gateway kicks nobody and is served without waiting out the bound', async () => {
      const { g1, g2 } = await twoGateways('one-per-platform');
      const ios = await login(g1, 'ios');
      const web = await login(g2, 'web');
      const started = Date.now();
      expect((await web.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
      await delay(100);
      expect(ios.socket.readyState).toBe(1);
    });

    it('one kicks the sessions on both gateways; a first login with nobody to ask is served at once', async () => {
      const { g1, g2 } = await twoGateways('one');
      const started = Date.now();
      const a = await login(g1, 'ios');
      expect((await a.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
      const b = await login(g2, 'web');
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

    it('malformed or foreign requests on the bus are ignored; the gateway keeps serving', async () => {
      const { root, g1 } = await twoGateways('one');
      const a = await login(g1, 'ios');
      const nc = conns[0]!;
      const subject = `${root}.${Buffer.from('t1').toString('base64url')}.${Buffer.from('alice').toString('base64url')}`;
      for (const body of [
        'not json',
        '[]',
        '{"op":"displace"}',
        JSON.stringify({
          op: 'displace',
          tenant: 't1',
          user: 'mallory',
          policy: 'one',
          incoming: { session: 'x', since: Date.now() + 1e6, gateway: 'evil' },
        }),
        JSON.stringify({ op: 'displace', tenant: 't1', user: 'alice', policy: 'none', incoming: { session: 'x', since: 1, gateway: 'g' } }),
      ]) {
        nc.publish(subject, body);
      }
      await delay(200);
      expect(a.socket.readyState).toBe(1);
      expect((await a.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    });
  });
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await delay(10);
  expect(check()).toBe(true);
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };
