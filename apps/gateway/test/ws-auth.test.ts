import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { issueToken } from '../src/index.ts';
import { SECRET, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

describe.each(TRANSPORTS)('WebSocket upgrade auth (%s)', (transport) => {
  let t: Started;
  beforeEach(async () => {
    t = await startGateway(transport, { allowedOrigins: ['https://app.example.com'] });
  });
  afterEach(async () => {
    await t.gateway.close();
  });

  const expect401 = async (answer: Promise<{ status: number; body: string }>, message: string) => {
    const { status, body } = await answer;
    expect(status).toBe(401);
    expect(JSON.parse(body)).toEqual({ ok: false, error: { code: 'UNAUTHORIZED', message } });
  };

  it('missing token → 401', async () => {
    await expect401(upgradeStatus(t.wsUrl()), 'missing token');
    await expect401(upgradeStatus(t.wsUrl(), { authorization: 'Basic YTpi' }), 'missing token');
  });

  it('bad signature → 401', async () => {
    const forged = await issueToken({ secret: 'some-other-secret-0123456789', user: 'alice', ttlSeconds: 60 });
    await expect401(upgradeStatus(t.wsUrl(), { authorization: `Bearer ${forged}` }), 'invalid token');
    await expect401(upgradeStatus(t.wsUrl('token=garbage')), 'invalid token');
  });

  it('expired token → 401', async () => {
    const expired = await issueToken({ secret: SECRET, user: 'alice', ttlSeconds: 60, now: Date.now() - 3_600_000 });
    await expect401(upgradeStatus(t.wsUrl(), { authorization: `Bearer ${expired}` }), 'token expired');
  });

  it('a token whose sub is not a valid id → 401', async () => {
    const bad = await new SignJWT({ tid: 't1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x:y')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(SECRET));
    await expect401(upgradeStatus(t.wsUrl(`token=${bad}`)), 'invalid token: sub');
  });

  it('accepts the header or the query parameter; the caller comes from the token', async () => {
    const viaHeader = await TestClient.connect(t.wsUrl(), { authorization: `Bearer ${await t.token('alice', 'acme')}` });
    await viaHeader.request('sync', { maxSeq: 0 });
    const viaQuery = await TestClient.connect(t.wsUrl(`token=${await t.token('bob')}`));
    // A user field in a frame is ignored: identity is the token's.
    await viaQuery.request('sync', { maxSeq: 0, user: 'alice' });
    expect(t.messaging.callsOf('sync').map((c) => c.caller)).toEqual([
      { tenant: 'acme', user: 'alice' },
      { tenant: 't1', user: 'bob' },
    ]);
    await Promise.all([viaHeader.close(), viaQuery.close()]);
  });

  it('never logs the token', async () => {
    const token = await t.token();
    await upgradeStatus(t.wsUrl(`token=${token}x`));
    const client = await TestClient.connect(t.wsUrl(`token=${token}`));
    await client.request('nope');
    await client.close();
    expect(JSON.stringify(t.logger.records)).not.toContain(token.slice(-20));
  });

  it('browser Origin: allowed passes, others get 403; no Origin (non-browser) passes', async () => {
    const authorization = `Bearer ${await t.token()}`;
    expect((await upgradeStatus(t.wsUrl(), { authorization, origin: 'https://app.example.com' })).status).toBe(101);
    const refused = await upgradeStatus(t.wsUrl(), { authorization, origin: 'https://evil.example.net' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe('FORBIDDEN');
    expect((await upgradeStatus(t.wsUrl(), { authorization })).status).toBe(101);
  });

  it('other paths are not upgraded', async () => {
    const authorization = `Bearer ${await t.token()}`;
    expect((await upgradeStatus(t.wsUrl().replace('/v1/ws', '/v2/ws'), { authorization })).status).toBe(404);
  });

  it('a verifier that fails unexpectedly → 500 without details, logged', async () => {
    await t.gateway.close();
    t = await startGateway(transport, {
      verifyToken: async () => {
        throw new Error('redis down at 10.0.0.7');
      },
    });
    const answer = await upgradeStatus(t.wsUrl('token=x'));
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain('10.0.0.7');
    expect(t.logger.records.some((r) => r.level === 'error')).toBe(true);
  });
});
