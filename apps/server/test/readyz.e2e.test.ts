/**
 * The embedded server's readiness: `GET /readyz` answers 200 as soon as it listens (its inbox
 * owner serves before the listener opens), so the first send right after it is served at once.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { SECRET, startTestServer, type TestServer } from './harness.ts';

describe('embedded server /readyz', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('is ready once listening, and a send right after is acknowledged without waiting', async () => {
    server = await startTestServer();
    const base = `http://127.0.0.1:${server.port}`;
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true });
    const token = await issueToken({ secret: SECRET, user: 'alice', tenant: 'default', ttlSeconds: 60 });
    const t0 = performance.now();
    const sent = await fetch(`${base}/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appinfo: 'readyz-1', to: { user: 'bob' }, type: 'text', body: { text: 'hi' } }),
    });
    expect(await sent.json()).toMatchObject({ ok: true, duplicate: false });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect((await fetch(`${base}/readyz`, { method: 'HEAD' })).status).toBe(200);
  });
});
