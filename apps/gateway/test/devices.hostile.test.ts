/** Hostile devices: forged, invalid or contradicting dev/plat are refused at the upgrade; a kicked socket serves nothing more. */
import { SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoginPolicy } from '@seqline/core';
import { issueToken } from '../src/index.ts';
import { delay, SECRET, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

const token = (claims: { dev?: string; plat?: 'ios' | 'web' } = {}, user = 'alice') =>
  issueToken({ secret: SECRET, user, tenant: 't1', ttlSeconds: 600, ...claims });
const signed = (claims: Record<string, unknown>, secret = SECRET) =>
  new SignJWT({ tid: 't1', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));

describe.each(TRANSPORTS)('devices, hostile (%s)', (transport) => {
  let t: Started;
  let policy: LoginPolicy = 'one';
  const open: TestClient[] = [];
  beforeEach(async () => {
    policy = 'one';
    t = await startGateway(transport, { loginPolicyOf: () => policy });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.socket.terminate();
    await t.gateway.close();
  });
  const connect = async (query: string, bearer: string) => {
    const c = await TestClient.connect(t.wsUrl(query), { authorization: `Bearer ${bearer}` });
    open.push(c);
    return c;
  };
  /** Refused at the upgrade: status and code; no socket, no subscription, nobody kicked. */
  const refused = async (query: string, bearer: string, status: number, code: string) => {
    const answer = await upgradeStatus(t.wsUrl(query), { authorization: `Bearer ${bearer}` });
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: { code } });
    expect(t.messaging.subscriberCount()).toBe(sitting);
  };
  let sitting = 0;

  it('invalid values in the URL → 400 BAD_REQUEST, and the live session is not kicked', async () => {
    const live = await connect('dev=phone&plat=ios', await token());
    sitting = 1;
    for (const query of ['dev=has%20space', 'dev=', `dev=${'x'.repeat(65)}`, 'plat=windows', 'plat=IOS', 'plat=', 'dev=a%2Fb']) {
      await refused(query, await token(), 400, 'BAD_REQUEST');
    }
    expect((await live.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
  });

  it('a URL value that differs from the token, or a repeated parameter → 401 UNAUTHORIZED', async () => {
    sitting = 0;
    await refused('dev=tablet', await token({ dev: 'phone' }), 401, 'UNAUTHORIZED');
    await refused('plat=web', await token({ plat: 'ios' }), 401, 'UNAUTHORIZED');
    await refused('dev=a&dev=b', await token(), 401, 'UNAUTHORIZED');
    await refused('plat=ios&plat=ios', await token(), 401, 'UNAUTHORIZED');
    // The same value in both is fine.
    const same = await connect('dev=phone&plat=ios', await token({ dev: 'phone', plat: 'ios' }));
    expect((await same.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
  });

  it('a signed token with an invalid dev/plat claim, or a forged one → 401, nobody kicked', async () => {
    const live = await connect('', await token({ plat: 'ios' }));
    sitting = 1;
    await refused('', await signed({ plat: 'windows' }), 401, 'UNAUTHORIZED');
    await refused('', await signed({ dev: 'a b' }), 401, 'UNAUTHORIZED');
    await refused('', await signed({ dev: 42 }), 401, 'UNAUTHORIZED');
    await refused('', await signed({ dev: 'x', plat: 'ios' }, 'a-forged-secret-of-enough-length'), 401, 'UNAUTHORIZED');
    await delay(50);
    expect(live.socket.readyState).toBe(1);
  });

  it('a kicked socket serves nothing more: replayed and new frames are UNAUTHORIZED, then it is closed 4409', async () => {
    const first = await connect('dev=phone&plat=ios', await token());
    const release = t.messaging.block('send');
    const pending = first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
    await delay(30);
    await connect('plat=ios', await token());
    await delay(30);
    const replayed = await first.request('send', { appinfo: 'a1', to: { user: 'bob' }, type: 'text', body: {} });
    const renewal = await first.request('auth', { token: await token() });
    expect(replayed.error?.code).toBe('UNAUTHORIZED');
    expect(renewal.error?.code).toBe('UNAUTHORIZED');
    release();
    expect((await pending).ok).toBe(true);
    expect((await first.closed).code).toBe(4409);
    expect(t.messaging.callsOf('send')).toHaveLength(1);
  });

  it("another user naming alice's device kicks nobody of alice", async () => {
    const alice = await connect('', await token({ dev: 'phone', plat: 'ios' }));
    const mallory = await connect('', await token({ dev: 'phone', plat: 'ios' }, 'mallory'));
    expect((await mallory.request('sync', { maxSeq: 0, limit: 1 })).ok).toBe(true);
    await delay(50);
    expect(alice.socket.readyState).toBe(1);
  });
});
