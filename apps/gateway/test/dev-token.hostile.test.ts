/**
 * POST /dev/token (the embedded server's demo sign-in) answers loopback clients only, and
 * a browser on this machine cannot be steered into fetching a token for a foreign page:
 * a non-loopback peer, a forwarded request, a foreign Host (DNS rebinding), a foreign Origin,
 * a preflight, a malformed body — each a typed refusal with no token issued.
 */
import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@seqline/core';
import { createTokenVerifier, issueToken } from '../src/index.ts';
import { createDevTokenRoute, isLoopbackAddress, isLoopbackHost, type DevTokenIssuer } from '../src/dev-token.ts';
import { originPolicy } from '../src/origin-policy.ts';
import type { HttpRequest } from '../src/transport/transport.ts';
import { SECRET, startGateway, TRANSPORTS, type Started } from './harness.ts';
import { exchange, request } from './raw-http.ts';

/** Counts what it signs: a refusal must leave `issued` at zero. */
function countingIssuer(): DevTokenIssuer & { issued: string[] } {
  const issued: string[] = [];
  return {
    issued,
    async issue(user, tenant) {
      issued.push(`${tenant}:${user}`);
      return { token: await issueToken({ secret: SECRET, user, tenant, ttlSeconds: 600 }), expiresAt: Date.now() + 600_000 };
    },
  };
}

/** A non-loopback IPv4 address of this machine (e.g. `hostname -I`), to connect from. */
const EXTERNAL_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
if (EXTERNAL_ADDRESS === undefined)
  console.log('dev token tests: no non-loopback IPv4 address here; the remote refusal is tested with an injected address only');

describe('loopback predicates', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['0000:0000:0000:0000:0000:0000:0000:0001', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', true],
    ['192.0.2.2', false],
    ['::ffff:192.0.2.2', false],
    ['10.0.0.1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['128.0.0.1', false],
    ['fd00::2', false],
    ['localhost', false],
    ['', false],
    ['127.0.0.1, 10.0.0.1', false],
    [undefined, false],
  ])('address %s → %s', (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });

  it.each([
    ['localhost:8080', true],
    ['LOCALHOST', true],
    ['app.localhost:80', true],
    ['127.0.0.1:8080', true],
    ['127.1', true],
    ['[::1]:8080', true],
    ['evil.test', false],
    ['localhost.evil.test', false],
    ['127.0.0.1.nip.io', false],
    ['evil.test@localhost', false],
    ['localhost/x', false],
    ['localhost evil', false],
    ['', false],
    [undefined, false],
    ['192.0.2.2:8080', false],
  ])('host %s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('the handler with an injected peer address', () => {
  const issuer = countingIssuer();
  const route = createDevTokenRoute({ issuer, origins: originPolicy(undefined), logger: silentLogger });
  const post = (remoteAddress: string | undefined, headers: Record<string, string> = {}) => {
    const all: Record<string, string> = { host: 'localhost:8080', ...headers };
    const req: HttpRequest = {
      method: 'POST',
      path: '/dev/token',
      query: '',
      header: (name) => all[name],
      body: Buffer.from('{"user":"alice"}'),
      bodyTooLarge: false,
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    };
    return route(req);
  };

  it('refuses an unknown, remote or IPv4-mapped remote peer, and answers a mapped loopback one', async () => {
    for (const address of [undefined, '192.0.2.2', '::ffff:192.0.2.2', 'fd00::2', '0.0.0.0']) {
      const reply = await post(address);
      expect(reply.status, String(address)).toBe(403);
      expect(JSON.parse(reply.body)).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    }
    expect(issuer.issued).toEqual([]);
    expect((await post('::ffff:127.0.0.1')).status).toBe(200);
    expect(issuer.issued).toEqual(['default:alice']);
  });

  it('refuses a request that went through a proxy, even from loopback', async () => {
    issuer.issued.length = 0;
    for (const name of ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host']) {
      expect((await post('127.0.0.1', { [name]: '127.0.0.1' })).status, name).toBe(403);
    }
    expect(issuer.issued).toEqual([]);
  });
});

describe.each(TRANSPORTS)('POST /dev/token over %s, bound to 0.0.0.0', (transport) => {
  let started: Started;
  const issuer = countingIssuer();
  const post = (body: string, headers: Array<[string, string]> = []) =>
    exchange(
      started.gateway.port,
      request(
        'POST',
        '/dev/token',
        [
          ['Host', `localhost:${started.gateway.port}`],
          ['Content-Type', 'application/json'],
          ['Content-Length', String(Buffer.byteLength(body))],
          ...headers,
        ],
        body,
      ),
      { responses: 1, quietMs: 50 },
    );

  beforeAll(async () => {
    started = await startGateway(transport, { host: '0.0.0.0', devTokens: issuer });
  });
  afterAll(async () => {
    await started.gateway.close();
  });

  it('answers a loopback client with a token that verifies, without CORS headers', async () => {
    const {
      responses: [reply],
    } = await post('{"user":"alice","tenant":"acme"}');
    expect(reply?.status).toBe(200);
    const body = JSON.parse(reply?.body ?? '') as { token: string; user: string; tenant: string };
    expect(body).toMatchObject({ ok: true, user: 'alice', tenant: 'acme' });
    expect(createTokenVerifier(SECRET)(body.token)).toMatchObject({ user: 'alice', tenant: 'acme' });
    expect(reply?.header('access-control-allow-origin')).toBeUndefined();
    expect(reply?.header('cache-control')).toBe('no-store');
    expect(started.logger.records.some((r) => r.level === 'warn' && r.msg?.startsWith('dev token route is on'))).toBe(true);
  });

  it.skipIf(EXTERNAL_ADDRESS === undefined)('refuses a client whose address is not loopback (403), even naming localhost', async () => {
    const before = issuer.issued.length;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: EXTERNAL_ADDRESS,
          localAddress: EXTERNAL_ADDRESS,
          port: started.gateway.port,
          method: 'POST',
          path: '/dev/token',
          headers: { host: `localhost:${started.gateway.port}`, 'content-type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end('{"user":"alice"}');
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN', message: 'the dev token route answers loopback clients only' },
    });
    expect(issuer.issued.length).toBe(before);
  });

  it("refuses what a foreign page could make this machine's browser send", async () => {
    const before = issuer.issued.length;
    const port = started.gateway.port;
    const refusals: Array<[string, Array<[string, string]>]> = [
      ['DNS rebinding: a foreign Host', [['Host', `evil.test:${port}`]]],
      ['a foreign Origin', [['Origin', 'http://evil.test']]],
      ['another port of localhost', [['Origin', `http://localhost:${port + 1}`]]],
      ['an opaque origin', [['Origin', 'null']]],
      ['a forwarded request', [['X-Forwarded-For', '203.0.113.9']]],
    ];
    for (const [what, headers] of refusals) {
      const body = '{"user":"alice"}';
      const lines: Array<[string, string]> = [['Content-Type', 'application/json'], ['Content-Length', String(body.length)], ...headers];
      if (!headers.some(([name]) => name === 'Host')) lines.unshift(['Host', `localhost:${port}`]);
      const {
        responses: [reply],
      } = await exchange(port, request('POST', '/dev/token', lines, body), { responses: 1, quietMs: 50 });
      expect(reply?.status, what).toBe(403);
      expect(reply?.header('access-control-allow-origin'), what).toBeUndefined();
    }
    // The page's own origin is fine.
    const {
      responses: [own],
    } = await post('{"user":"bob"}', [['Origin', `http://localhost:${port}`]]);
    expect(own?.status).toBe(200);
    expect(issuer.issued.length).toBe(before + 1);
  });

  it('answers no preflight and no other method (405, Allow: POST)', async () => {
    const port = started.gateway.port;
    for (const method of ['OPTIONS', 'GET', 'PUT', 'DELETE']) {
      const {
        responses: [reply],
      } = await exchange(
        port,
        request(method, '/dev/token', [
          ['Host', `localhost:${port}`],
          ['Origin', 'http://evil.test'],
          ['Access-Control-Request-Method', 'POST'],
        ]),
        { responses: 1, quietMs: 50 },
      );
      expect(reply?.status, method).toBe(405);
      expect(reply?.header('allow')).toBe('POST');
      expect(reply?.header('access-control-allow-origin')).toBeUndefined();
    }
  });

  it('refuses malformed bodies with BAD_REQUEST and an oversized one with TOO_LARGE', async () => {
    const before = issuer.issued.length;
    for (const body of [
      '',
      'user=alice',
      '[]',
      'null',
      '{"user":""}',
      '{"user":"a:b"}',
      '{"user":"alice","admin":true}',
      '{"user":"alice","tenant":"../x"}',
      `{"user":"${'a'.repeat(65)}"}`,
      '{"user":42}',
      '{"user":"\\ud800"}',
    ]) {
      const {
        responses: [reply],
      } = await post(body);
      expect(reply?.status, body).toBe(400);
      expect(JSON.parse(reply?.body ?? '')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    }
    const {
      responses: [tooLarge],
    } = await post(`{"user":"alice","pad":"${'x'.repeat(70_000)}"}`);
    expect(tooLarge?.status).toBe(413);
    expect(issuer.issued.length).toBe(before);
  });
});

describe.each(TRANSPORTS)('a gateway without the option (%s)', (transport) => {
  it('has no /dev/token route (404)', async () => {
    const started = await startGateway(transport);
    try {
      const port = started.gateway.port;
      const {
        responses: [reply],
      } = await exchange(
        port,
        request(
          'POST',
          '/dev/token',
          [
            ['Host', `localhost:${port}`],
            ['Content-Type', 'application/json'],
            ['Content-Length', '16'],
          ],
          '{"user":"alice"}',
        ),
        { responses: 1, quietMs: 50 },
      );
      expect(reply?.status).toBe(404);
      expect(started.logger.records.some((r) => r.msg?.startsWith('dev token route is on'))).toBe(false);
    } finally {
      await started.gateway.close();
    }
  });
});
