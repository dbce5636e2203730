import { Agent, get as httpGet } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, NotFoundError, OverloadedError } from '@seqline/protocol';
import { sampleEntry } from './fake-messaging.ts';
import { http, startGateway, TRANSPORTS, type Started } from './harness.ts';

const send = { appinfo: '0192-a', to: { group: 'g1' }, type: 'text', body: { text: 'hi' } };

describe.each(TRANSPORTS)('HTTP API (%s)', (transport) => {
  let t: Started;
  afterEach(async () => {
    await t.gateway.close();
  });

  const auth = async (user = 'alice', tenant = 't1') => ({ authorization: `Bearer ${await t.token(user, tenant)}` });
  const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

  it('GET /healthz', async () => {
    t = await startGateway(transport);
    const answer = await http(t.httpUrl('/healthz'));
    expect(answer.status).toBe(200);
    expect(json(answer.body)).toEqual({ ok: true });
  });

  it('GET /readyz: ready unless told otherwise; 503 with the detail while sends cannot be served; liveness unaffected', async () => {
    t = await startGateway(transport);
    expect(await http(t.httpUrl('/readyz'))).toMatchObject({ status: 200, body: '{"ok":true}' });
    await t.gateway.close();

    let answer: { ready: boolean; detail?: Record<string, number> } = { ready: false, detail: { shards: 4, unserved: 3 } };
    let calls = 0;
    t = await startGateway(transport, {
      readiness: async () => {
        calls++;
        if (calls === 3) throw new Error('NATS is gone');
        return answer;
      },
    });
    const waiting = await http(t.httpUrl('/readyz'));
    expect(waiting.status).toBe(503);
    expect(json(waiting.body)).toEqual({ ok: false, shards: 4, unserved: 3 });
    expect((await http(t.httpUrl('/healthz'))).status).toBe(200);
    expect(await http(t.httpUrl('/readyz'), { method: 'HEAD' })).toMatchObject({ status: 503, body: '' });
    // A readiness check that fails is a not-ready answer, not an error page.
    expect(await http(t.httpUrl('/readyz'))).toMatchObject({ status: 503, body: '{"ok":false}' });
    answer = { ready: true, detail: { shards: 4, unserved: 0 } };
    const ready = await http(t.httpUrl('/readyz'));
    expect(ready.status).toBe(200);
    expect(json(ready.body)).toEqual({ ok: true, shards: 4, unserved: 0 });
    expect((await http(t.httpUrl('/readyz'), { method: 'POST' })).status).toBe(405);
  });

  it('POST /v1/send: same args and result as the op, caller from the token', async () => {
    t = await startGateway(transport);
    const answer = await http(t.httpUrl('/v1/send'), {
      method: 'POST',
      headers: { ...(await auth('bob', 'acme')), 'content-type': 'application/json' },
      body: JSON.stringify(send),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(json(answer.body)).toEqual({ ok: true, seq: 7, sendTime: 1_763_700_000_000, duplicate: false });
    expect(t.messaging.calls).toEqual([{ method: 'send', caller: { tenant: 'acme', user: 'bob' }, args: [send] }]);
  });

  it('GET /v1/sync?maxSeq=N&limit=M (header or token query parameter)', async () => {
    t = await startGateway(transport);
    const viaHeader = await http(t.httpUrl('/v1/sync?maxSeq=3&limit=2'), { headers: await auth() });
    expect(viaHeader.status).toBe(200);
    expect(json(viaHeader.body)).toEqual({
      ok: true,
      entries: [sampleEntry],
      headSeq: 42,
      hasMore: false,
      groups: [{ id: 'big', headGseq: 9, cursor: 3 }],
      convs: [],
    });
    const viaQuery = await http(t.httpUrl(`/v1/sync?maxSeq=0&token=${await t.token('carol')}`));
    expect(viaQuery.status).toBe(200);
    expect(t.messaging.callsOf('sync').map((c) => [c.caller.user, ...c.args])).toEqual([
      ['alice', 3, 2],
      ['carol', 0, 200],
    ]);
  });

  it.each([
    ['no token', '/v1/sync?maxSeq=0', undefined, 401, 'UNAUTHORIZED'],
    ['bad token', '/v1/sync?maxSeq=0', { authorization: 'Bearer nope' }, 401, 'UNAUTHORIZED'],
    ['bad query', '/v1/sync?maxSeq=abc', 'auth', 400, 'BAD_REQUEST'],
    ['missing maxSeq', '/v1/sync', 'auth', 400, 'BAD_REQUEST'],
    ['unknown route', '/v2/sync', 'auth', 404, 'NOT_FOUND'],
  ] as const)('GET: %s', async (_name, path, headers, status, code) => {
    t = await startGateway(transport);
    const answer = await http(t.httpUrl(path), { headers: headers === 'auth' ? await auth() : headers });
    expect(answer.status).toBe(status);
    expect(json(answer.body)).toMatchObject({ ok: false, error: { code } });
    expect(t.messaging.calls).toHaveLength(0);
  });

  it('POST /v1/send input errors: 400 for bad JSON / fields, 413 for a big body or request', async () => {
    t = await startGateway(transport);
    const post = async (body: string) => http(t.httpUrl('/v1/send'), { method: 'POST', headers: await auth(), body });
    const cases: Array<[string, number, string]> = [
      ['{', 400, 'BAD_REQUEST'],
      ['[]', 400, 'BAD_REQUEST'],
      [JSON.stringify({ ...send, to: { user: 'a:b' } }), 400, 'BAD_REQUEST'],
      [JSON.stringify({ ...send, body: 'x'.repeat(MAX_BODY_BYTES) }), 413, 'TOO_LARGE'],
      [JSON.stringify({ ...send, body: 'x'.repeat(MAX_BODY_BYTES * 4) }), 413, 'TOO_LARGE'],
    ];
    for (const [body, status, code] of cases) {
      const answer = await post(body);
      expect(answer.status, body.slice(0, 40)).toBe(status);
      expect(json(answer.body)).toMatchObject({ ok: false, error: { code } });
    }
    expect(t.messaging.calls).toHaveLength(0);
    expect((await post(JSON.stringify(send))).status).toBe(200);
  });

  it('maps Messaging errors to statuses with the same JSON error body', async () => {
    t = await startGateway(transport);
    const cases: Array<[unknown, number, string]> = [
      [new NotFoundError('no such inbox'), 404, 'NOT_FOUND'],
      [new OverloadedError(), 503, 'OVERLOADED'],
      [new Error('secret internals'), 500, 'INTERNAL'],
    ];
    for (const [err, status, code] of cases) {
      t.messaging.failWith('sync', err);
      const answer = await http(t.httpUrl('/v1/sync?maxSeq=0'), { headers: await auth() });
      expect(answer.status).toBe(status);
      expect(json(answer.body)).toMatchObject({ ok: false, error: { code } });
      expect(answer.body).not.toContain('secret internals');
    }
  });

  it('wrong method → 405 with Allow; GET /v1/ws without upgrade → 426', async () => {
    t = await startGateway(transport);
    const wrong = await http(t.httpUrl('/v1/send'), { headers: await auth() });
    expect(wrong.status).toBe(405);
    expect(wrong.headers['allow']).toBe('POST');
    expect((await http(t.httpUrl('/v1/ws'))).status).toBe(426);
  });

  it('rate limits HTTP calls per user too (429)', async () => {
    t = await startGateway(transport, { rateLimit: { perSecond: 0.001, burst: 2 } });
    const headers = await auth();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await http(t.httpUrl('/v1/sync?maxSeq=0'), { headers })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('Origin: allowed gets CORS headers, others 403; preflight only for allowed origins', async () => {
    t = await startGateway(transport, { allowedOrigins: ['https://app.example.com'] });
    const headers = await auth();
    const allowed = await http(t.httpUrl('/v1/sync?maxSeq=0'), { headers: { ...headers, origin: 'https://app.example.com' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const refused = await http(t.httpUrl('/v1/sync?maxSeq=0'), { headers: { ...headers, origin: 'https://evil.example.net' } });
    expect(refused.status).toBe(403);
    expect(json(refused.body)).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await http(t.httpUrl('/v1/send'), { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toContain('authorization');
    expect((await http(t.httpUrl('/v1/send'), { method: 'OPTIONS', headers: { origin: 'https://evil.example.net' } })).status).toBe(403);
  });

  it('GET /metrics: the Node process metrics only when asked for', async () => {
    t = await startGateway(transport, { processMetrics: true });
    const text = (await http(t.httpUrl('/metrics'))).body;
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^seqline_gateway_connections 0$/m);
    await t.gateway.close();
    t = await startGateway(transport);
    expect((await http(t.httpUrl('/metrics'))).body).not.toContain('nodejs_eventloop_lag');
  });

  it('GET /metrics: connections, frames by op, errors by code, op latency', async () => {
    t = await startGateway(transport);
    const c = await t.connect();
    await c.request('sync', { maxSeq: 0 });
    await c.request('sync', { maxSeq: 'x' });
    c.sendRaw('garbage');
    await c.nextReply(null);
    await http(t.httpUrl('/v1/send'), { method: 'POST', headers: await auth(), body: JSON.stringify(send) });
    const answer = await http(t.httpUrl('/metrics'));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain('text/plain');
    const text = answer.body;
    expect(text).toMatch(/^seqline_gateway_connections 1$/m);
    expect(text).toMatch(/^seqline_gateway_frames_total\{op="sync"\} 1$/m);
    expect(text).toMatch(/^seqline_gateway_frames_total\{op="send"\} 1$/m);
    expect(text).toMatch(/^seqline_gateway_frames_total\{op="invalid"\} 2$/m);
    expect(text).toMatch(/^seqline_gateway_errors_total\{code="BAD_REQUEST"\} 2$/m);
    expect(text).toMatch(/^seqline_gateway_op_duration_seconds_count\{op="sync"\} 1$/m);
    expect(text).toMatch(/^seqline_gateway_op_duration_seconds_count\{op="send"\} 1$/m);
    expect(text).toMatch(/^seqline_gateway_http_requests_total\{route="\/v1\/send",status="200"\} 1$/m);
    await c.close();
  });

  it('while shutting down: no new connections; a kept-alive one sees healthz 503 and OVERLOADED', async () => {
    t = await startGateway(transport, { shutdownGraceMs: 2000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        httpGet(t.httpUrl(path), { agent, headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        }).on('error', reject);
      });
    try {
      expect((await get('/healthz')).status).toBe(200);
      const c = await t.connect();
      const release = t.messaging.block('sync');
      const pending = c.request('sync', { maxSeq: 0 });
      const deadline = Date.now() + 2000;
      while (t.messaging.callsOf('sync').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const closing = t.gateway.close();
      await expect(http(t.httpUrl('/healthz'))).rejects.toThrow(); // listener closed
      if (transport === 'uws') {
        expect(await get('/healthz')).toMatchObject({ status: 503 });
        const refused = await get('/v1/sync?maxSeq=0', await auth());
        expect(refused.status).toBe(503);
        expect(json(refused.body)).toMatchObject({ error: { code: 'OVERLOADED' } });
      } else {
        // node:http's server.close() also drops idle keep-alive connections.
        await expect(get('/healthz')).rejects.toThrow();
      }
      release();
      expect(await pending).toMatchObject({ ok: true });
      await closing;
    } finally {
      agent.destroy();
    }
  });
});
