/**
 * The gateway's socket defences on the distributed stack (a gateway process and a worker
 * process on Cassandra, Redis and NATS, the rate limit in Redis with leases):
 * - bad frames are charged to their sender: four sockets each sending 19 malformed 64 KB frames
 *   and one valid frame, as fast as the gateway reads and reconnecting when closed, must not slow
 *   another user's sync beyond 2x its unloaded p99 (unloaded and flooded windows alternate in
 *   one run, the bound is on the median of the window pairs' ratios; the figures are printed);
 * - the per-user socket cap, lowered live with `seqline-admin limits set` against the gateway;
 * - token expiry on open sockets and the `auth` renewal.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '@seqline/protocol';
import { compareUnderFlood, describeLatency } from '../../gateway/test/support/sync-latency.ts';
import { SECRET, TestClient, waitFor } from '../../server/test/harness.ts';
import { openSocket, type Opened } from '../../server/test/hostile/raw-socket.ts';
import { Cluster, uniqueId } from './support/cluster.ts';
import { probeAll, REPO_ROOT, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'bad-frame flood on the distributed stack')) {
  describe('gateway socket defences (distributed)', () => {
    let cluster: Cluster;
    const open: TestClient[] = [];

    beforeAll(async () => {
      // The production rate limit (200/s, burst 400; leases of 10), not the cluster's unlimited one.
      cluster = await Cluster.start({ workers: 1, gateways: 1, env: { SEQLINE_RATE_PER_SEC: '200', SEQLINE_RATE_BURST: '400' } });
    }, 240_000);

    afterAll(async () => {
      for (const c of open) c.close();
      await cluster?.close();
    }, 60_000);

    it("keeps another user's sync p99 within 2x of unloaded; the flooders are refused and closed", async () => {
      const gateway = cluster.gateways[0]!;
      const [victim, friend] = [
        await TestClient.connect(gateway.url, uniqueId('victim'), cluster.tenant),
        await TestClient.connect(gateway.url, uniqueId('friend'), cluster.tenant),
      ];
      open.push(victim, friend);
      await waitFor(
        async () => (await friend.call('send', { appinfo: uniqueId('w'), to: { user: victim.user }, type: 'text', body: {} })).ok,
        30_000,
        'a first send',
      );
      for (let i = 0; i < 29; i++)
        await friend.ok('send', { appinfo: uniqueId('m'), to: { user: victim.user }, type: 'text', body: { i } });
      await waitFor(async () => (await victim.syncAll()).length >= 30, 10_000, "the victim's 30 entries");
      const tokens = await Promise.all(
        [1, 2, 3, 4].map((i) => issueToken({ secret: SECRET, user: uniqueId(`m${i}`), tenant: cluster.tenant, ttlSeconds: 600 })),
      );

      const r = await compareUnderFlood(async () => (await victim.call('sync', { maxSeq: 0, limit: 30 })).ok, { url: gateway.url, tokens });

      console.log(`distributed sync unloaded: ${describeLatency(r.unloaded)}`);
      console.log(
        `distributed sync under the bad-frame flood: ${describeLatency(r.flooded)}; p99 ratio ${r.ratio.toFixed(2)}; per window pair ${r.windowRatios.map((x) => x.toFixed(2)).join(' ')}, median ${r.medianWindowRatio.toFixed(2)}`,
      );
      console.log(`flood: ${JSON.stringify(r.flood)}`);
      expect(r.unloaded.failures + r.flooded.failures).toBe(0);
      expect(r.flood.connects).toBeGreaterThanOrEqual(4);
      expect(r.flood.closes['1008']).toBeGreaterThanOrEqual(4);
      expect(r.flood.refusedUpgrades).toBeGreaterThan(0);
      expect(r.medianWindowRatio).toBeLessThanOrEqual(2);
      expect((await victim.syncAll()).every((e) => e.from === friend.user)).toBe(true);
    }, 90_000);

    it('per-user socket cap: 20 by default, lowered live by `limits set`; the oldest go with 4429', async () => {
      const gateway = cluster.gateways[0]!;
      const cli = (...args: string[]) => seqlineAdmin(['--url', gateway.httpUrl, ...args]);
      const token = await issueToken({ secret: SECRET, user: uniqueId('many'), tenant: cluster.tenant, ttlSeconds: 600 });
      const opened: Opened[] = [];
      for (let i = 0; i < 22; i++) opened.push(await openSocket(gateway.url, token));
      for (const oldest of opened.slice(0, 2))
        expect(await oldest.closed).toEqual({ code: 4429, reason: 'too many sockets for this user' });
      expect(await answers(opened[2]!)).toBe(true);
      for (const o of opened) o.ws.close();
      // The settings row is shared by the keyspace: put the default back whatever happens.
      try {
        const set = await cli('limits', 'set', '--per-user-sockets', '3');
        expect(set.code, set.stderr).toBe(0);
        const phone = await issueToken({ secret: SECRET, user: uniqueId('phone'), tenant: cluster.tenant, ttlSeconds: 600 });
        const four = [];
        for (let i = 0; i < 4; i++) four.push(await openSocket(gateway.url, phone));
        expect((await four[0]!.closed).code).toBe(4429);
        for (const kept of four.slice(1)) expect(await answers(kept)).toBe(true);
        for (const o of four) o.ws.close();
      } finally {
        expect((await cli('limits', 'set', '--per-user-sockets', '20')).code).toBe(0);
      }
    }, 60_000);

    it("a socket closes with 4401 at its token's exp unless renewed with auth; foreign and forged renewals are refused", async () => {
      const gateway = cluster.gateways[0]!;
      const user = uniqueId('renewer');
      const target = Date.now() + 2500;
      const short = await issueToken({ secret: SECRET, user, tenant: cluster.tenant, ttlSeconds: 1, now: target - 1000 });
      const [renewed, lapsed] = [await openSocket(gateway.url, short), await openSocket(gateway.url, short)];
      const forged = await issueToken({ secret: 'not-the-cluster-secret-0123456789', user, tenant: cluster.tenant, ttlSeconds: 600 });
      const foreign = await issueToken({ secret: SECRET, user, tenant: uniqueId('t'), ttlSeconds: 600 });
      expect(await lapsed.call('auth', { token: forged })).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
      expect(await lapsed.call('auth', { token: foreign })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      const fresh = await issueToken({ secret: SECRET, user, tenant: cluster.tenant, ttlSeconds: 600 });
      expect(await renewed.call('auth', { token: fresh })).toMatchObject({ ok: true, exp: expect.any(Number) });
      expect(await lapsed.closed).toEqual({ code: 4401, reason: 'token expired' });
      expect(Date.now()).toBeGreaterThanOrEqual(Math.floor(target / 1000) * 1000 - 50);
      expect(await answers(renewed)).toBe(true);
      renewed.ws.close();
    }, 30_000);
  });
}

async function answers(o: Opened): Promise<boolean> {
  return (await o.call('sync', { maxSeq: 0 }))['ok'] === true;
}

/** The real CLI (`apps/admin/src/main.ts`), minting its admin token from the cluster's secret. */
function seqlineAdmin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, SEQLINE_SECRET: SECRET };
  return new Promise((resolve) => {
    // `source`: the workspace packages' TypeScript entry (harmless where their exports lack it).
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', 'apps/admin/src/main.ts', ...args],
      { cwd: REPO_ROOT, env },
      (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
      },
    );
  });
}
