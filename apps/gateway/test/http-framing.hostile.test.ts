/**
 * HTTP framing attacks, in raw bytes, on both transports: every expectation below is the same
 * for uWS and `ws`, and the last suite compares the two byte for byte. A request the gateway
 * will not frame (transport/framing.ts) gets no answer and nothing behind it is served.
 * Methods, paths and stray upgrades: http-routing.hostile.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createAdminTokenVerifier, issueAdminToken, MAX_FRAME_BYTES } from '@seqline/protocol';
import { SECRET, startGateway, TRANSPORTS, UWS_LOADS, type Started } from './harness.ts';
import { exchange, HANDSHAKE, normalise, request } from './raw-http.ts';
import { HEALTHZ, json, send, unreachableAdmin, useFramingGateway } from './support/framing-gateway.ts';

describe.each(TRANSPORTS)('HTTP framing (%s)', (transport) => {
  const framing = useFramingGateway(transport);
  const { port, bearer, expectUnanswered } = framing;

  it('HEAD answers like GET, with the GET length and no body, on every route; keep-alive stays in step', async () => {
    const heads = [
      request('HEAD', '/healthz'),
      request('HEAD', '/metrics'),
      request('HEAD', '/v1/sync?maxSeq=0', [bearer()]),
      request('HEAD', '/v1/send', [bearer()]),
      request('HEAD', '/v1/ws'),
      request('HEAD', '/nope'),
    ];
    const answer = await exchange(port(), [...heads, HEALTHZ].join(''), { responses: 7, head: [0, 1, 2, 3, 4, 5] });
    expect(answer.rest).toBe('');
    expect(answer.responses.map((r) => [r.status, r.body])).toEqual([
      [200, ''],
      [200, ''],
      [200, ''],
      [405, ''],
      [426, ''],
      [404, ''],
      [200, '{"ok":true}'],
    ]);
    const [healthz, , sync, wrongMethod] = answer.responses;
    expect(healthz?.header('content-length')).toBe('11'); // what GET /healthz sends: {"ok":true}
    expect(healthz?.header('content-type')).toBe('application/json');
    expect(Number(sync?.header('content-length'))).toBeGreaterThan(100);
    expect(wrongMethod?.header('allow')).toBe('POST');
    expect(framing.started.messaging.callsOf('sync')).toHaveLength(1);
  });

  it('204 (preflight) carries neither body nor Content-Length; the next response parses', async () => {
    const preflight = request('OPTIONS', '/v1/send', [['Origin', 'https://app.example.com']]);
    const answer = await exchange(port(), preflight + HEALTHZ, { responses: 2 });
    expect(answer.responses.map((r) => r.status)).toEqual([204, 200]);
    expect(answer.responses[0]?.header('content-length')).toBeUndefined();
    expect(answer.rest).toBe('');
  });

  it('two Authorization headers → 401 whichever is valid, on the API, the upgrade and the admin API', async () => {
    const attempts = [
      request('GET', '/v1/sync?maxSeq=0', [bearer(), bearer('forged')]),
      request('GET', '/v1/sync?maxSeq=0', [bearer('forged'), bearer()]),
      request('GET', '/v1/sync?maxSeq=0', [bearer(), ['authorization', `Bearer ${framing.token}`]]),
      request('POST', '/v1/send', [bearer(), bearer(), ['Content-Length', String(send.length)]], send),
    ];
    for (const bytes of attempts) {
      const { responses } = await exchange(port(), bytes, { responses: 1 });
      expect(responses.map((r) => [r.status, json(r).error?.message])).toEqual([[401, 'more than one Authorization header']]);
    }
    for (const pair of [
      [bearer(), bearer('forged')],
      [bearer('forged'), bearer()],
    ]) {
      const { responses, rest } = await exchange(port(), request('GET', '/v1/ws', [...HANDSHAKE, ...pair]), { responses: 1 });
      expect([responses[0]?.status, json(responses[0]).error?.message, rest]).toEqual([401, 'more than one Authorization header', '']);
    }
    expect(framing.started.messaging.calls).toEqual([]);
    // The admin API reads Authorization itself: two admin tokens never reach its service.
    const withAdmin = await startGateway(transport, {
      admin: { service: unreachableAdmin, verifyAdminToken: createAdminTokenVerifier(SECRET) },
    });
    try {
      const admin = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
      const { responses } = await exchange(withAdmin.gateway.port, request('GET', '/v1/admin/tiers', [bearer(admin), bearer(admin)]), {
        responses: 1,
      });
      expect(responses.map((r) => [r.status, json(r).error?.message])).toEqual([[401, 'more than one Authorization header']]);
    } finally {
      await withAdmin.gateway.close();
    }
  });

  it('a token in the header and a different one in ?token=, or ?token= twice → 401; the same token twice is one token', async () => {
    const other = await framing.started.token('mallory');
    const refused: Array<[string, Array<[string, string]>, string]> = [
      [`/v1/sync?maxSeq=0&token=${other}`, [bearer()], 'different tokens in Authorization and the token query parameter'],
      [`/v1/sync?maxSeq=0&token=${framing.token}&token=${framing.token}`, [], 'more than one token query parameter'],
      [`/v1/sync?maxSeq=0&token=${framing.token}&%74oken=${other}`, [], 'more than one token query parameter'],
      [`/v1/ws?token=${other}`, [...HANDSHAKE, bearer()], 'different tokens in Authorization and the token query parameter'],
      [`/v1/ws?token=${framing.token}&token=${other}`, HANDSHAKE, 'more than one token query parameter'],
    ];
    for (const [target, headers, message] of refused) {
      const { responses } = await exchange(port(), request('GET', target, headers), { responses: 1 });
      expect(responses.map((r) => [r.status, json(r).error?.message])).toEqual([[401, message]]);
    }
    expect(framing.started.messaging.calls).toEqual([]);
    const same = await exchange(port(), request('GET', `/v1/sync?maxSeq=0&token=${framing.token}`, [bearer()]), { responses: 1 });
    expect(same.responses[0]?.status).toBe(200);
    const upgraded = await exchange(port(), request('GET', `/v1/ws?token=${framing.token}`, [...HANDSHAKE, bearer()]), { responses: 1 });
    expect(upgraded.responses[0]?.status).toBe(101);
  });

  it('an Origin outside SEQLINE_ALLOWED_ORIGINS → 403 FORBIDDEN on the API and the upgrade, even with a valid token', async () => {
    const evil: [string, string] = ['Origin', 'https://evil.example.net'];
    for (const bytes of [request('GET', '/v1/sync?maxSeq=0', [bearer(), evil]), request('GET', '/v1/ws', [...HANDSHAKE, bearer(), evil])]) {
      const { responses } = await exchange(port(), bytes, { responses: 1 });
      expect(responses.map((r) => [r.status, json(r).error?.code, r.header('access-control-allow-origin')])).toEqual([
        [403, 'FORBIDDEN', undefined],
      ]);
    }
    // Two Origins (one allowed) are one unknown origin, not a choice.
    const two = await exchange(port(), request('GET', '/v1/sync?maxSeq=0', [bearer(), ['Origin', 'https://app.example.com'], evil]), {
      responses: 1,
    });
    expect(two.responses[0]?.status).toBe(403);
    expect(framing.started.messaging.calls).toEqual([]);
  });

  it('an oversize body on POST /v1/send → 413 TOO_LARGE and the connection closes, declared or sent; its content is never a request', async () => {
    const embedded = request('GET', '/metrics');
    const huge = embedded + 'x'.repeat(MAX_FRAME_BYTES) + embedded;
    const declaredOnly = request('POST', '/v1/send', [bearer(), ['Content-Length', '10000000']]); // no body follows
    const sent = request('POST', '/v1/send', [bearer(), ['Content-Length', String(huge.length)]], huge);
    for (const bytes of [declaredOnly, sent]) {
      const answer = await exchange(port(), bytes, { responses: 1 });
      expect(answer.responses.map((r) => [r.status, json(r).error?.code, r.header('connection')?.toLowerCase()])).toEqual([
        [413, 'TOO_LARGE', 'close'],
      ]);
      expect(answer.closed).toBe(true);
    }
    expect(framing.started.messaging.calls).toEqual([]);
  });

  it('Transfer-Encoding (with or without Content-Length, any spelling) and repeated or odd Content-Length are not answered', async () => {
    const chunked = `${send.length.toString(16)}\r\n${send}\r\n0\r\n\r\n`;
    for (const headers of [
      [
        ['Content-Length', '4'],
        ['Transfer-Encoding', 'chunked'],
      ],
      [['Transfer-Encoding', 'chunked']],
      [['Transfer-Encoding', 'xchunked']],
      [['Transfer-Encoding', 'gzip, chunked']],
      [['Transfer-Encoding', 'identity']],
    ] as Array<Array<[string, string]>>)
      await expectUnanswered(request('POST', '/v1/send', [bearer(), ...headers], chunked));
    for (const length of [[String(send.length), String(send.length)], [`${send.length}, ${send.length}`], [`+${send.length}`]]) {
      await expectUnanswered(request('POST', '/v1/send', [bearer(), ...length.map((v): [string, string] => ['Content-Length', v])], send));
    }
  });

  it('a body on GET/HEAD is refused unanswered (a proxy ignoring it would read the body as a request); Content-Length: 0 is fine', async () => {
    const smuggled = request('GET', '/metrics');
    await expectUnanswered(request('GET', '/healthz', [['Content-Length', String(smuggled.length)]], smuggled));
    await expectUnanswered(request('HEAD', '/healthz', [['Content-Length', String(smuggled.length)]], smuggled));
    await expectUnanswered(request('GET', '/v1/sync?maxSeq=0', [bearer(), ['Content-Length', String(send.length)]], send));
    const zero = await exchange(port(), request('GET', '/healthz', [['Content-Length', '0']]) + HEALTHZ, { responses: 2 });
    expect(zero.responses.map((r) => r.status)).toEqual([200, 200]);
  });

  it('requests neither parser agrees on are not answered: HTTP/1.0, no or two Hosts, too many or too large headers, bare LF', async () => {
    await expectUnanswered('GET /healthz HTTP/1.0\r\nHost: gateway.test\r\n\r\n');
    await expectUnanswered('GET /healthz HTTP/1.1\r\n\r\n');
    await expectUnanswered(
      request('GET', '/healthz', [
        ['Host', 'a.test'],
        ['Host', 'b.test'],
      ]),
    );
    await expectUnanswered(
      request(
        'GET',
        '/healthz',
        Array.from({ length: 60 }, (_, i): [string, string] => [`X-${i}`, 'v']),
      ),
    );
    await expectUnanswered(request('GET', '/healthz', [['X-Big', 'a'.repeat(20_000)]]));
    await expectUnanswered('GET /healthz HTTP/1.1\nHost: gateway.test\n\n');
    const fine = await exchange(
      port(),
      request('GET', '/healthz', [
        ['X-Big', 'a'.repeat(8_000)],
        ...Array.from({ length: 40 }, (_, i): [string, string] => [`X-${i}`, 'v']),
      ]),
      { responses: 1 },
    );
    expect(fine.responses[0]?.status).toBe(200);
  });
});

// Needs both transports: on a Node without the native uWS binary, .ci/run runs it on Node 20.
describe.skipIf(!UWS_LOADS)('HTTP framing: the two transports answer byte for byte alike', () => {
  const started: Started[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.gateway.close()));
  });

  it('same status, headers and body for every request (Date, server name and keep-alive aside)', async () => {
    for (const transport of TRANSPORTS) started.push(await startGateway(transport, { allowedOrigins: ['https://app.example.com'] }));
    const token = await started[0]!.token();
    const battery: Array<[string, boolean]> = [
      [HEALTHZ, false],
      [request('HEAD', '/healthz'), true],
      [request('HEAD', '/v1/send'), true],
      [request('POST', '/healthz', [['Content-Length', '2']], '{}'), false],
      [
        request('GET', '/v1/sync?maxSeq=0', [
          ['Authorization', `Bearer ${token}`],
          ['Authorization', 'Bearer x'],
        ]),
        false,
      ],
      [request('GET', '/v1/sync?maxSeq=x', [['Authorization', `Bearer ${token}`]]), false],
      [request('GET', '/v1/sync?maxSeq=0&token=a&token=b'), false],
      [request('OPTIONS', '/v1/sync', [['Origin', 'https://app.example.com']]), false],
      [request('OPTIONS', '/v1/sync', [['Origin', 'https://evil.test']]), false],
      [
        request('POST', '/v1/send', [
          ['Authorization', `Bearer ${token}`],
          ['Content-Length', '9999999'],
        ]),
        false,
      ],
      [request('GET', '/v1/ws', [...HANDSHAKE, ['Authorization', 'Bearer nope']]), false],
      [request('GET', '/v1/ws'), false],
      [request('GET', '/v2/ws', HANDSHAKE), false],
      [request('GET', '/v1/%2e%2e/healthz'), false],
      [request('DELETE', '/nope'), false],
      [request('TRACE', '/healthz'), false],
    ];
    for (const [bytes, head] of battery) {
      const [a, b] = await Promise.all(started.map((s) => exchange(s.gateway.port, bytes, { responses: 1, head: head ? [0] : [] })));
      expect(b?.responses.map(normalise), bytes.split('\r\n')[0]).toEqual(a?.responses.map(normalise));
      expect([a?.rest, b?.rest]).toEqual(['', '']);
    }
  });
});
