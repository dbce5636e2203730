/**
 * The send hooks scenarios (apps/server/test/send-hooks-scenarios.ts) against the distributed
 * stack: a gateway and a worker as processes on Cassandra, Redis and NATS, started with the
 * same hook settings as the embedded run, calling real receivers in this process. The
 * after-send jobs go through the JetStream work queue and the worker's pool.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { issueAdminToken } from '@seqline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appinfo, SECRET, TestClient, waitFor } from '../../server/test/harness.ts';
import { describeSendHooks, hookEnv, HOOK_SECRET, type SendHookContext } from '../../server/test/send-hooks-scenarios.ts';
import { Cluster, uniqueId } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'send hooks on the distributed stack')) {
  let cluster: Cluster | undefined;
  let before: HookReceiver | undefined;
  let after: HookReceiver | undefined;
  const open: TestClient[] = [];
  const ctx: SendHookContext = {
    connect: async (user) => {
      if (!cluster) throw new Error('cluster not started');
      const c = await TestClient.connect(cluster.gateways[0]!.url, user, cluster.tenant);
      open.push(c);
      return c;
    },
    id: uniqueId,
    get before() {
      if (!before) throw new Error('not started');
      return before;
    },
    get after() {
      if (!after) throw new Error('not started');
      return after;
    },
  };
  beforeAll(async () => {
    before = await startHookReceiver({ secret: HOOK_SECRET, mode: { kind: 'answer', answer: () => ({ allow: true }) } });
    after = await startHookReceiver({ secret: HOOK_SECRET });
    cluster = await Cluster.start({ workers: 1, gateways: 1, env: hookEnv(before, after) });
  }, 240_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await cluster?.close();
    await before?.close();
    await after?.close();
  }, 60_000);
  describeSendHooks('distributed', () => ctx);

  describe('send hooks, switched live (distributed)', () => {
    /** One tenant setting through the gateway's admin API: every process applies it within its poll. */
    async function setHooks(patch: Record<string, unknown>): Promise<void> {
      const token = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 600 });
      const res = await fetch(`${cluster!.gateways[0]!.httpUrl}/v1/admin/hooks/${cluster!.tenant}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(patch),
      });
      expect(res.status).toBe(200);
    }

    it('a hook that never answers: fail-closed refuses and stores nothing; switched to open, the body as sent is stored', async () => {
      const [alice, bob] = [await ctx.connect(uniqueId('fo-alice')), await ctx.connect(uniqueId('fo-bob'))];
      const send = () => ({ to: { user: bob.user }, appinfo: appinfo(), type: 'text', body: { text: 'as sent' } });
      ctx.before.setMode({ kind: 'hang' });
      try {
        await setHooks({ beforeSendTimeoutMs: 300, sendPolicy: 'open' }); // the suite's env is shared-group
        const refused = await waitFor(async () => {
          const r = await alice.call('send', send());
          return !r.ok && r.error.code === 'OVERLOADED' ? r : undefined;
        }, 15_000);
        expect(refused).toMatchObject({ ok: false, error: { message: expect.stringContaining('before-send') as unknown } });
        await setHooks({ beforeSendFailure: 'open' });
        const stored = await waitFor(async () => {
          const r = await alice.call('send', send());
          return r.ok ? r : undefined;
        }, 15_000);
        expect(stored).toMatchObject({ ok: true, duplicate: false });
        expect(stored).not.toHaveProperty('body');
        const texts = (await bob.syncAll()).filter((e) => e.kind === 'msg').map((e) => e.body);
        // Only the sends made once the tenant was open: every refused one stored nothing.
        expect(texts).toEqual([{ text: 'as sent' }]);
      } finally {
        ctx.before.setMode({ kind: 'answer', answer: () => ({ allow: true }) });
        await setHooks({ beforeSendTimeoutMs: null, beforeSendFailure: null, sendPolicy: null });
      }
    });
  });
}
