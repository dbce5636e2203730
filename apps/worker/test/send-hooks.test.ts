/**
 * The send hooks scenarios (apps/server/test/send-hooks-scenarios.ts) against the distributed
 * stack: a gateway and a worker as processes on Cassandra, Redis and NATS, started with the
 * same hook settings as the embedded run, calling real receivers in this process. The
 * after-send jobs go through the JetStream work queue and the worker's pool.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll } from 'vitest';
import { TestClient } from '../../server/test/harness.ts';
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
}
