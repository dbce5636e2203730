/** I6: per-user and per-tenant in-flight caps, changed live, refuse with RATE_LIMITED and lose nothing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, startTestServer, TestClient, waitFor, type TestServer } from './harness.ts';

let s: TestServer;
const open: TestClient[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  for (const c of open) c.close();
  await s.stop();
});

async function connect(user: string, tenant = 'default'): Promise<TestClient> {
  const c = await TestClient.connect(s.url, user, tenant);
  open.push(c);
  return c;
}

describe('in-flight caps', () => {
  it('refuses a user past perUserInFlight, serves others, and follows a live change', async () => {
    await s.settings.update({ limits: { perUserInFlight: 2 } });
    const [greedy, other, rcpt] = [await connect('greedy'), await connect('other'), await connect('rcpt')];
    const burst = await Promise.all(
      Array.from({ length: 30 }, () =>
        greedy.call('send', {
          appinfo: appinfo(),
          to: { user: rcpt.user },
          type: 'text',
          body: {},
        }),
      ),
    );
    const refused = burst.filter((r) => !r.ok);
    const accepted = burst.filter((r) => r.ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of refused) expect(r).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
    expect((await other.call('sync', { maxSeq: 0 })).ok).toBe(true);
    // Nothing accepted is lost; nothing refused was stored.
    await waitFor(async () => (await rcpt.syncAll()).length === accepted.length);

    await s.settings.update({ limits: { perUserInFlight: 64 } });
    const again = await Promise.all(
      Array.from({ length: 30 }, () =>
        greedy.call('send', {
          appinfo: appinfo(),
          to: { user: rcpt.user },
          type: 'text',
          body: {},
        }),
      ),
    );
    expect(again.every((r) => r.ok)).toBe(true);
  });

  it('refuses a tenant past perTenantInFlight while another tenant is served', async () => {
    await s.settings.update({ limits: { perUserInFlight: 2, perTenantInFlight: 3 } });
    try {
      const crowd = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((u) => connect(u, 'busy')));
      const calm = await connect('a', 'calm');
      const results = await Promise.all(
        crowd.flatMap((c) =>
          [0, 1].map(() =>
            c.call('send', {
              appinfo: appinfo(),
              to: { user: 'sink' },
              type: 'text',
              body: {},
            }),
          ),
        ),
      );
      expect(results.some((r) => !r.ok && r.error.code === 'RATE_LIMITED')).toBe(true);
      expect((await calm.call('send', { appinfo: appinfo(), to: { user: 'sink' }, type: 'text', body: {} })).ok).toBe(true);
    } finally {
      await s.settings.update({ limits: { perUserInFlight: 64, perTenantInFlight: 2000 } });
    }
  });
});
