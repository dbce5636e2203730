/** Bad input over the real server: each gets its typed error, nothing is lost, others keep being served. */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { appinfo, SECRET, startTestServer, TestClient, waitFor, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

async function connect(user: string): Promise<TestClient> {
  const c = await TestClient.connect(s.url, user);
  open.push(c);
  return c;
}

function nextReply(c: TestClient): Promise<unknown> {
  return waitFor(() => c.unmatched.shift());
}

describe('bad input', () => {
  it('answers each malformed frame with its typed error and keeps serving', async () => {
    const [mallory, alice, bob] = [await connect('mallory'), await connect('alice'), await connect('bob')];
    mallory.sendRaw('not json');
    expect(await nextReply(mallory)).toMatchObject({ id: null, ok: false, error: { code: 'BAD_REQUEST' } });
    mallory.sendRaw('[1,2,3]');
    expect(await nextReply(mallory)).toMatchObject({ id: null, ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await mallory.call('no.such.op')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await mallory.call('send', { to: { user: 'bob' }, type: 'text', body: {} })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    expect(await mallory.call('sync', { maxSeq: 'ten' })).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(await mallory.call('send', { appinfo: appinfo(), to: { user: 'bad:id' }, type: 'text', body: {} })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    const big = 'x'.repeat(70 * 1024);
    expect(await mallory.call('send', { appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { big } })).toMatchObject({
      ok: false,
      error: { code: 'TOO_LARGE' },
    });

    // Meanwhile others are served, and nothing of theirs was lost.
    const a = appinfo();
    await alice.ok('send', { appinfo: a, to: { user: 'bob' }, type: 'text', body: { ok: 1 } });
    await waitFor(async () => (await bob.syncAll()).some((e) => e.appinfo === a));
    // mallory's connection is still usable after the errors.
    expect(await mallory.ok('sync', { maxSeq: 0 })).toMatchObject({ ok: true });
    // Rejected sends stored nothing anywhere.
    expect((await bob.syncAll()).map((e) => e.from)).toEqual(['alice']);
  });

  it("never reads someone else's inbox: the user comes from the token only", async () => {
    const [carol, dave] = [await connect('carol'), await connect('dave')];
    await carol.ok('send', { appinfo: appinfo(), to: { user: 'erin' }, type: 'text', body: { secret: true } });
    const r = await dave.call('sync', { maxSeq: 0, user: 'carol' });
    if (r.ok) expect((r as unknown as { entries: unknown[] }).entries).toEqual([]);
    else expect(r.error.code).toBe('BAD_REQUEST');
  });

  it('refuses a bad or expired token at the upgrade with 401', async () => {
    const statusOf = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(s.url, { headers });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          ws.terminate();
        });
        ws.on('open', () => {
          resolve(101);
          ws.close();
        });
        ws.on('error', () => resolve(-1));
      });
    expect(await statusOf({})).toBe(401);
    expect(await statusOf({ authorization: 'Bearer garbage' })).toBe(401);
    const forged = await issueToken({ secret: 'another-secret-0123456789', user: 'alice', ttlSeconds: 60 });
    expect(await statusOf({ authorization: `Bearer ${forged}` })).toBe(401);
    const expired = await issueToken({ secret: SECRET, user: 'alice', ttlSeconds: 1, now: Date.now() - 3600_000 });
    expect(await statusOf({ authorization: `Bearer ${expired}` })).toBe(401);
  });
});
