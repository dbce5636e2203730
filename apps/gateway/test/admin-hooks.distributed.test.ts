/**
 * Hook settings in the distributed stack (2 gateways + 1 worker as processes on CQL, Redis,
 * NATS): the environment's defaults apply to every tenant, a change made through one gateway's
 * admin API is what the other gateway's LiveSettings serve within seconds (through CQL), and
 * no process ever writes a secret to its output.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAdminToken, issueToken } from '@seqline/protocol';
import { SECRET } from '../../server/test/harness.ts';
import { Cluster } from '../../worker/test/support/cluster.ts';
import { probeAll, requireServices } from '../../worker/test/support/services.ts';
import { http } from './harness.ts';

const ENV_SECRET = `env-hook-secret-${randomBytes(10).toString('hex')}`;
const TENANT_SECRET = `tenant-hook-secret-${randomBytes(10).toString('hex')}`;

if (requireServices(await probeAll(), 'hook settings across distributed gateways')) {
  describe('hook settings (2 gateways + 1 worker as processes)', () => {
    let cluster: Cluster;
    let admin: Record<string, string>;
    beforeAll(async () => {
      cluster = await Cluster.start({
        workers: 1,
        gateways: 2,
        env: { SEQLINE_HOOK_SECRET: ENV_SECRET, SEQLINE_LOGIN_POLICY: 'one-per-platform', SEQLINE_NOTIFY_WINDOW_MS: '300' },
      });
      admin = { authorization: `Bearer ${await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 })}` };
    }, 240_000);
    afterAll(async () => {
      await cluster?.close();
    });

    const gatewayUrl = (i: number) => cluster.gateways[i]?.httpUrl ?? '';
    const call = async (i: number, method: string, body?: unknown, headers = admin) => {
      const answer = await http(`${gatewayUrl(i)}/v1/admin/hooks/${cluster.tenant}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(answer.body).not.toContain(ENV_SECRET);
      expect(answer.body).not.toContain(TENANT_SECRET);
      return { status: answer.status, json: JSON.parse(answer.body) as Record<string, unknown> };
    };

    it("a change through gateway 1's admin API is served by gateway 2; bad ones are refused by either", async () => {
      for (const i of [0, 1]) {
        expect(await call(i, 'GET')).toMatchObject({
          status: 200,
          json: { hooks: { secretSet: true, loginPolicy: 'one-per-platform', notifyWindowMs: 300 }, override: { secretSet: false } },
        });
      }
      const set = await call(0, 'PUT', { secret: TENANT_SECRET, notifyUrl: 'https://push.example.com/n', loginPolicy: 'one' });
      expect(set).toMatchObject({ status: 200, json: { override: { secretSet: true, loginPolicy: 'one' } } });
      const version = (set.json as { version: number }).version;

      const deadline = Date.now() + 5_000;
      let seen = await call(1, 'GET');
      while ((seen.json as { version: number }).version < version && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await call(1, 'GET');
      }
      expect(seen.json).toMatchObject({
        hooks: { secretSet: true, loginPolicy: 'one', notifyUrl: 'https://push.example.com/n', notifyWindowMs: 300 },
        override: { secretSet: true, loginPolicy: 'one', notifyUrl: 'https://push.example.com/n' },
        version,
      });

      for (const body of [{ notifyUrl: 'ftp://x.example.com/' }, { secret: 'short' }, { nope: 1 }, []]) {
        expect(await call(1, 'PUT', body)).toMatchObject({ status: 400, json: { error: { code: 'BAD_REQUEST' } } });
      }
      const userToken = await issueToken({ secret: SECRET, user: 'alice', tenant: cluster.tenant, ttlSeconds: 60 });
      expect((await call(1, 'PUT', { loginPolicy: 'all' }, { authorization: `Bearer ${userToken}` })).status).toBe(403);
      expect((await call(0, 'GET')).json).toMatchObject({ hooks: { loginPolicy: 'one' }, version });
    });

    it('no process wrote a secret to its output', () => {
      const processes = [...cluster.gateways, ...cluster.workers];
      expect(processes.every((p) => p.records.length > 0)).toBe(true);
      for (const p of processes) {
        expect(p.output, p.name).not.toContain(ENV_SECRET);
        expect(p.output, p.name).not.toContain(TENANT_SECRET);
      }
      // The admin write was audited by the gateway that took it.
      expect(cluster.gateways[0]?.records.some((r) => r.msg === 'admin: hooks set')).toBe(true);
    });
  });
}
