/**
 * Token expiry on open sockets and the `auth` renewal (docs/protocol.md "Token expiry on open
 * sockets"): past exp a socket is closed with 4401 and gets no more pushes, unless the client
 * renewed with a valid token of the same user and tenant; forged, expired, malformed and other
 * users' tokens are refused with their typed code and change nothing.
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loginClock } from '@seqline/core';
import { ClientSession } from '../src/client-session.ts';
import { InFlight } from '../src/in-flight.ts';
import { GatewayMetrics } from '../src/metrics.ts';
import { TurnBatch } from '../src/turn-batch.ts';
import type { SocketConnection } from '../src/transport/transport.ts';
import { createTokenVerifier, issueToken } from '../src/index.ts';
import { FakeMessaging } from './fake-messaging.ts';
import { sampleEntry } from './fake-messaging.ts';
import { delay, eventually, memoryLogger, SECRET, startGateway, TestClient, TRANSPORTS, upgradeStatus, type Started } from './harness.ts';

const alice = { tenant: 't1', user: 'alice' };

/** A token whose exp falls 1.5–2.5 s from now (exp has whole seconds); expMs is that exp. */
async function shortToken(user = 'alice', tenant = 't1'): Promise<{ token: string; expMs: number }> {
  const target = Date.now() + 2500;
  const token = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 1, now: target - 1000 });
  return { token, expMs: Math.floor(target / 1000) * 1000 };
}

const connectWith = (t: Started, token: string) => TestClient.connect(t.wsUrl(), { authorization: `Bearer ${token}` });

describe.each(TRANSPORTS)('token expiry on open sockets (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  it('an idle socket is closed with 4401 at exp and gets no push after it', async () => {
    t = await startGateway(transport);
    const { token, expMs } = await shortToken();
    const c = await connectWith(t, token);
    t.messaging.push(alice, 0, [sampleEntry]);
    expect(await c.nextPush()).toMatchObject({ op: 'push', prevSeq: 0 });
    const closed = await c.closed;
    expect(closed).toEqual({ code: 4401, reason: 'token expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(expMs - 50);
    expect(Date.now()).toBeLessThan(expMs + 1000);
    // The server side let go of it too: nothing is pushed to it any more.
    await eventually(() => t.messaging.subscriberCount(alice) === 0 && t.gateway.connectionCount() === 0);
  });

  it('a renewal with a fresh token of the same user keeps the socket working past the old exp', async () => {
    t = await startGateway(transport);
    const { token, expMs } = await shortToken();
    const c = await connectWith(t, token);
    const fresh = await issueToken({ secret: SECRET, user: 'alice', tenant: 't1', ttlSeconds: 600 });
    const renewed = await c.request('auth', { token: fresh });
    const exp = JSON.parse(Buffer.from(fresh.split('.')[1] ?? '', 'base64url').toString()) as { exp: number };
    expect(renewed).toMatchObject({ ok: true, exp: exp.exp }); // unix seconds, as in the JWT
    await delay(expMs - Date.now() + 600);
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    t.messaging.push(alice, 0, [sampleEntry]);
    expect(await c.nextPush()).toMatchObject({ op: 'push' });
    expect(t.messaging.callsOf('sync').map((call) => call.caller)).toEqual([alice]);
    await c.close();
  });

  it('forged, expired and malformed renewals are UNAUTHORIZED and do not move the expiry', async () => {
    t = await startGateway(transport);
    const { token } = await shortToken();
    const c = await connectWith(t, token);
    const forged = await issueToken({ secret: 'another-secret-0123456789abcdef', user: 'alice', tenant: 't1', ttlSeconds: 600 });
    const expired = await issueToken({ secret: SECRET, user: 'alice', tenant: 't1', ttlSeconds: 60, now: Date.now() - 3_600_000 });
    // Within the verifier's 5 s skew tolerance, but past its own exp: no use for a socket.
    const justExpired = await issueToken({ secret: SECRET, user: 'alice', tenant: 't1', ttlSeconds: 1, now: Date.now() - 3000 });
    const [header, payload] = parts(token);
    const unsigned = `${header}.${payload}.`;
    for (const bad of [forged, expired, justExpired, 'garbage', '', 'a.b.c', unsigned, 'x'.repeat(5000)]) {
      expect(await c.request('auth', { token: bad }), bad.slice(0, 20)).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    }
    expect(await c.request('auth', { token: 42 })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await c.request('auth', {})).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true }); // the session keeps its rights
    expect(await c.closed).toEqual({ code: 4401, reason: 'token expired' }); // ... and its old exp
    expect(JSON.stringify(t.logger.records)).not.toContain(forged.slice(-20));
  });

  it("another user's or tenant's token is FORBIDDEN; the socket stays who it was, until its own exp", async () => {
    t = await startGateway(transport);
    const { token } = await shortToken();
    const c = await connectWith(t, token);
    for (const [user, tenant] of [
      ['bob', 't1'],
      ['alice', 't2'],
      ['bob', 't2'],
    ] as const) {
      const other = await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 600 });
      expect(await c.request('auth', { token: other })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    }
    expect(await c.request('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    expect(t.messaging.callsOf('sync').map((call) => call.caller)).toEqual([alice]);
    expect(t.messaging.subscriberCount({ tenant: 't1', user: 'bob' })).toBe(0);
    expect(await c.closed).toEqual({ code: 4401, reason: 'token expired' });
  });

  it('a token past its exp opens no socket, even within the skew tolerance', async () => {
    t = await startGateway(transport);
    const justExpired = await issueToken({ secret: SECRET, user: 'alice', tenant: 't1', ttlSeconds: 1, now: Date.now() - 3000 });
    const answer = await upgradeStatus(t.wsUrl(), { authorization: `Bearer ${justExpired}` });
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'UNAUTHORIZED', message: 'token expired' } });
    expect(t.gateway.connectionCount()).toBe(0);
  });
});

function parts(token: string): [string, string] {
  const [header = '', payload = ''] = token.split('.');
  return [header, payload];
}

/** A socket that records what the session does to it. */
class RecordingConnection implements SocketConnection {
  sent: string[] = [];
  closedWith: { code: number; reason: string } | null = null;
  get isOpen(): boolean {
    return this.closedWith === null;
  }
  send(text: string): boolean {
    this.sent.push(text);
    return true;
  }
  bufferedAmount(): number {
    return 0;
  }
  close(code: number, reason: string): void {
    this.closedWith ??= { code, reason };
  }
  terminate(): void {
    this.closedWith ??= { code: 1006, reason: '' };
  }
}

describe('a frame that arrives past exp (before the expiry timer ran)', () => {
  it('is refused UNAUTHORIZED with its id, unread, and the socket is closed with 4401', () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    const conn = new RecordingConnection();
    const messaging = new FakeMessaging();
    const session = new ClientSession(
      conn,
      { caller: alice, expiresAt: now + 60_000, device: {} },
      {
        messaging,
        logger: memoryLogger(),
        metrics: new GatewayMetrics(new Registry()),
        rateLimiter: null,
        limits: {
          maxBackpressureBytes: 1 << 20,
          maxConsecutiveBadFrames: 20,
          maxInFlightPerConnection: 8,
          refusalAllowance: { burst: 64, perSecond: 8 },
          holdMs: 5000,
        },
        inFlight: new InFlight(),
        turn: new TurnBatch(() => undefined),
        verifyToken: createTokenVerifier(SECRET),
        clock,
        acceptedAt: loginClock(clock.now),
        isClosing: () => false,
        onHold: () => Promise.resolve(),
        onClosed: () => undefined,
      },
    );
    now += 60_000; // the timer (real time) has not fired: the frame check alone must hold
    session.message(Buffer.from(JSON.stringify({ id: 5, op: 'send', appinfo: 'x', to: { user: 'bob' }, type: 't', body: 1 })));
    expect(conn.sent.map((f) => JSON.parse(f) as unknown)).toEqual([
      { id: 5, ok: false, error: { code: 'UNAUTHORIZED', message: expect.stringContaining('expired') } },
    ]);
    expect(conn.closedWith).toEqual({ code: 4401, reason: 'token expired' });
    expect(messaging.calls).toEqual([]); // nothing reached Messaging
    session.closed(4401);
  });
});
