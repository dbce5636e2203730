/**
 * HTTP routing attacks, in raw bytes, on both transports (same expectations for uWS and `ws`):
 * unsupported methods, path tricks and stray Upgrade headers never reach a handler.
 * The rest of the framing rules: http-framing.hostile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { TRANSPORTS } from './harness.ts';
import { exchange, HANDSHAKE, request } from './raw-http.ts';
import { json, send, useFramingGateway } from './support/framing-gateway.ts';

describe.each(TRANSPORTS)('HTTP routing (%s)', (transport) => {
  const framing = useFramingGateway(transport);
  const { port, bearer, expectUnanswered } = framing;

  it('unsupported methods are not answered; supported ones on the wrong route get 405 with Allow, unknown routes 404', async () => {
    for (const method of ['TRACE', 'CONNECT', 'PROPFIND', 'FOO', 'get']) await expectUnanswered(request(method, '/healthz'));
    const answer = await exchange(port(), request('DELETE', '/healthz') + request('PUT', '/v1/sync') + request('GET', '/nope'), {
      responses: 3,
    });
    expect(answer.responses.map((r) => [r.status, r.header('allow'), json(r).error?.code])).toEqual([
      [405, 'GET, HEAD', 'BAD_REQUEST'],
      [405, 'GET, HEAD', 'BAD_REQUEST'],
      [404, undefined, 'NOT_FOUND'],
    ]);
  });

  it('path tricks find no route: 404 NOT_FOUND, nothing served, nothing called', async () => {
    const paths = [
      '/v1/sync/../healthz',
      '/v1/../v1/sync',
      '/v1/%2e%2e/healthz',
      '/%76%31/sync',
      '//v1/sync',
      '/v1/sync/',
      '/V1/SYNC',
      '/v1/sync%00',
      '/v1/sync;x',
      '/v1\\sync',
      '/v1/admin/../sync',
      '/healthz/..',
      '/v1/ws/../sync',
    ];
    for (const path of paths) {
      const { responses } = await exchange(port(), request('GET', `${path}?maxSeq=0`, [bearer()]), { responses: 1 });
      expect([path, responses[0]?.status, json(responses[0]).error?.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    expect(framing.started.messaging.calls).toEqual([]);
    for (const target of ['http://gateway.test/healthz', '*', 'healthz', '/heal thz', '/h\u00e9althz'])
      await expectUnanswered(request('GET', target));
  });

  it('Upgrade elsewhere than a valid handshake is plain HTTP; with a body it is refused', async () => {
    const healthz = await exchange(port(), request('GET', '/healthz', HANDSHAKE), { responses: 1 });
    expect(healthz.responses.map((r) => [r.status, r.body])).toEqual([[200, '{"ok":true}']]);
    const badVersion = HANDSHAKE.map(([n, v]): [string, string] => [n, n === 'Sec-WebSocket-Version' ? '12' : v]);
    for (const headers of [
      badVersion,
      HANDSHAKE.filter(([n]) => n !== 'Connection'),
      [...HANDSHAKE, ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ==']],
    ] as Array<Array<[string, string]>>) {
      const { responses } = await exchange(port(), request('GET', '/v1/ws', [...headers, bearer()]), { responses: 1 });
      expect(responses.map((r) => [r.status, json(r).error?.message])).toEqual([[426, 'WebSocket upgrade required']]);
    }
    await expectUnanswered(
      request('POST', '/v1/send', [bearer(), ['Connection', 'Upgrade'], ['Upgrade', 'h2c'], ['Content-Length', String(send.length)]], send),
    );
  });
});
