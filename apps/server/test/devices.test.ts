/**
 * Devices on the embedded server, end to end: the tenant's live login policy (hooks settings)
 * decides who a login displaces, and `GET /v1/admin/devices/:tenant/:user` lists the live
 * sessions only (closed and kicked ones gone). Hostile: the route refuses user tokens and bad ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DeviceSession, Platform } from '@seqline/core';
import { issueAdminToken, issueToken } from '@seqline/protocol';
import { SECRET, startTestServer, waitFor, type TestServer } from './harness.ts';

const TENANT = 'devs';
let s: TestServer;
let adminToken: string;
beforeAll(async () => {
  s = await startTestServer();
  adminToken = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
  await s.settings.update({ hooks: { tenant: TENANT, patch: { loginPolicy: 'one-per-platform' } } });
});
afterAll(async () => {
  await s.stop();
});

interface Socket {
  ws: WebSocket;
  closed: Promise<number>;
  frames: unknown[];
}
async function login(user: string, dev: string, plat: Platform): Promise<Socket> {
  const token = await issueToken({ secret: SECRET, user, tenant: TENANT, ttlSeconds: 600 });
  const ws = new WebSocket(`${s.url}?dev=${dev}&plat=${plat}`, { headers: { authorization: `Bearer ${token}` } });
  const frames: unknown[] = [];
  ws.on('message', (d: WebSocket.RawData) => frames.push(JSON.parse(String(d))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, closed, frames };
}
async function devices(
  tenant: string,
  user: string,
  token = adminToken,
): Promise<{ status: number; body: { devices?: DeviceSession[]; error?: { code: string } } }> {
  const res = await fetch(`http://127.0.0.1:${s.port}/v1/admin/devices/${tenant}/${user}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as { devices?: DeviceSession[] } };
}

describe('devices on the embedded server', () => {
  it('lists live sessions; a kicked one and a closed one are gone', async () => {
    const phone = await login('ann', 'phone-1', 'ios');
    const browser = await login('ann', 'browser', 'web');
    const pc = await login('ann', 'pc', 'desktop');
    const listed = await devices(TENANT, 'ann');
    expect(listed.status).toBe(200);
    expect(listed.body.devices?.map((d) => [d.dev, d.plat])).toEqual([
      ['phone-1', 'ios'],
      ['browser', 'web'],
      ['pc', 'desktop'],
    ]);
    for (const d of listed.body.devices ?? [])
      expect(d).toMatchObject({ session: expect.any(String), since: expect.any(Number), gateway: expect.any(String) });

    const phone2 = await login('ann', 'phone-2', 'ios');
    expect(await phone.closed).toBe(4409);
    expect(phone.frames.at(-1)).toEqual({ op: 'kicked', by: { dev: 'phone-2', plat: 'ios' } });
    pc.ws.close();
    await pc.closed;
    await waitFor(async () => (await devices(TENANT, 'ann')).body.devices?.length === 2, 5000, 'the closed socket to leave the list');
    expect((await devices(TENANT, 'ann')).body.devices?.map((d) => d.dev)).toEqual(['browser', 'phone-2']);
    browser.ws.close();
    phone2.ws.close();
  });

  it('a tenant without a policy keeps every session (all)', async () => {
    const token = await issueToken({ secret: SECRET, user: 'bo', tenant: 'other', ttlSeconds: 600 });
    const open = (dev: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`${s.url}?dev=${dev}&plat=ios`, { headers: { authorization: `Bearer ${token}` } });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const a = await open('a');
    const b = await open('b');
    expect((await devices('other', 'bo')).body.devices).toHaveLength(2);
    a.close();
    b.close();
  });

  it('hostile: a user token is refused (403), no token (401), bad ids (400), and nothing is listed for them', async () => {
    const userToken = await issueToken({ secret: SECRET, user: 'ann', tenant: TENANT, ttlSeconds: 600 });
    expect((await devices(TENANT, 'ann', userToken)).status).toBe(403);
    expect((await devices(TENANT, 'ann', 'garbage')).status).toBe(401);
    const bad = await devices(TENANT, 'a%20b');
    expect(bad.status).toBe(400);
    expect(bad.body.devices).toBeUndefined();
    expect((await devices('x'.repeat(65), 'ann')).status).toBe(400);
  });
});
