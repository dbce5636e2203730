/**
 * The login policy across two gateway processes (one worker) on the real services: a second
 * ios login on the other gateway kicks the first (its requests all answered, the kicked frame,
 * then 4409) before the new socket is served; a web login kicks nobody; `seqline-admin devices`'
 * route lists the live sessions of both gateways and not the closed ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DeviceSession, Platform } from '@seqline/core';
import { issueAdminToken, issueToken } from '@seqline/protocol';
import { SECRET, waitFor } from '../../server/test/harness.ts';
import { Cluster, type NodeProcess } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

interface Socket {
  ws: WebSocket;
  /** Every frame with its arrival time (performance.now()). */
  frames: { at: number; frame: { op?: string; id?: number; ok?: boolean } }[];
  closed: Promise<{ code: number; at: number }>;
  request(op: string, args: object): Promise<{ at: number; ok: boolean; error?: { code: string } }>;
}

if (requireServices(await probeAll(), 'devices across two gateway processes')) {
  describe('login policy across gateways (2 gateways + 1 worker as processes)', () => {
    let cluster: Cluster;
    let admin: string;
    let g1: NodeProcess;
    let g2: NodeProcess;
    beforeAll(async () => {
      cluster = await Cluster.start({ workers: 1, gateways: 2 });
      [g1, g2] = cluster.gateways as [NodeProcess, NodeProcess];
      admin = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
      const set = await adminCall(g1, 'PUT', `hooks/${cluster.tenant}`, { loginPolicy: 'one-per-platform' });
      expect(set.status).toBe(200);
      // Both gateways read it live (settings poll): wait until the other one shows it.
      await waitFor(
        async () => (await adminCall(g2, 'GET', `hooks/${cluster.tenant}`)).text.includes('one-per-platform'),
        15_000,
        'g2 to see the policy',
      );
    }, 240_000);
    afterAll(async () => {
      await cluster?.close();
    });

    const adminCall = async (g: NodeProcess, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${g.httpUrl}/v1/admin/${path}`, {
        method,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, text: await res.text() };
    };
    const login = async (g: NodeProcess, user: string, dev: string, plat: Platform): Promise<Socket> => {
      const token = await issueToken({ secret: SECRET, user, tenant: cluster.tenant, ttlSeconds: 600, dev, plat });
      const ws = new WebSocket(g.url, { headers: { authorization: `Bearer ${token}` } });
      const frames: Socket['frames'] = [];
      const waiting = new Map<number, (r: { at: number; ok: boolean; error?: { code: string } }) => void>();
      ws.on('message', (d: WebSocket.RawData) => {
        const frame = JSON.parse(String(d)) as { op?: string; id?: number; ok?: boolean; error?: { code: string } };
        const at = performance.now();
        frames.push({ at, frame });
        if (frame.op === undefined && typeof frame.id === 'number')
          waiting.get(frame.id)?.({ at, ok: frame.ok === true, ...(frame.error ? { error: frame.error } : {}) });
      });
      const closed = new Promise<{ code: number; at: number }>((resolve) =>
        ws.on('close', (code) => resolve({ code, at: performance.now() })),
      );
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      let nextId = 1;
      return {
        ws,
        frames,
        closed,
        request: (op, args) =>
          new Promise((resolve) => {
            const id = nextId++;
            waiting.set(id, resolve);
            ws.send(JSON.stringify({ id, op, ...args }));
          }),
      };
    };
    const devicesOf = async (g: NodeProcess, user: string) =>
      (JSON.parse((await adminCall(g, 'GET', `devices/${cluster.tenant}/${user}`)).text) as { devices: DeviceSession[] }).devices;

    it('a second ios login on the other gateway kicks the first: in-flight answered, kicked, 4409, and only then is the new one served', async () => {
      const first = await login(g1, 'ann', 'phone-1', 'ios');
      expect((await first.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      const sends = Array.from({ length: 20 }, (_, i) =>
        first.request('send', { appinfo: `dev-${i}-${Date.now()}`, to: { user: 'bob' }, type: 'text', body: { i } }),
      );
      const second = await login(g2, 'ann', 'phone-2', 'ios');
      const served = await second.request('sync', { maxSeq: 0, limit: 1 });
      const closed = await first.closed;
      expect(closed.code).toBe(4409);
      const answers = await Promise.all(sends); // every request got its reply before the close
      for (const a of answers) expect(a.ok || a.error?.code === 'UNAUTHORIZED').toBe(true);
      const kicked = first.frames.find((f) => f.frame.op === 'kicked');
      expect(kicked?.frame).toEqual({ op: 'kicked', by: { dev: 'phone-2', plat: 'ios' } });
      expect(first.frames.at(-1)?.frame.op).toBe('kicked'); // the last frame before the close
      expect(served.ok).toBe(true);
      expect(kicked!.at).toBeLessThanOrEqual(served.at);
      second.ws.close();
    });

    it('a web login on the other gateway kicks nobody; admin devices lists both gateways, not closed sessions', async () => {
      const ios = await login(g1, 'cy', 'phone', 'ios');
      const web = await login(g2, 'cy', 'browser', 'web');
      expect((await web.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
      const listed = await devicesOf(g1, 'cy');
      expect(listed.map((d) => [d.dev, d.plat, d.gateway])).toEqual([
        ['phone', 'ios', g1.name],
        ['browser', 'web', g2.name],
      ]);
      expect(ios.ws.readyState).toBe(WebSocket.OPEN);
      web.ws.close();
      await web.closed;
      await waitFor(async () => (await devicesOf(g2, 'cy')).length === 1, 5000, 'the closed session to leave the list');
      expect((await devicesOf(g2, 'cy')).map((d) => d.dev)).toEqual(['phone']);
      ios.ws.close();
    });
  });
}
