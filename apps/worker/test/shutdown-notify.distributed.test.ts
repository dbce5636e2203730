/**
 * SIGTERM to the worker (the shard owners, their notification windows, the job consumers) in
 * the middle of a burst of sends to offline users, one gateway and one worker as processes on
 * Cassandra, Redis and NATS (apps/server/test/shutdown-burst-scenario.ts): after its restart
 * every notification window and every after-send call goes out, exactly the windows expected,
 * and nothing is dead-lettered.
 */
import { issueAdminToken } from '@seqline/protocol';
import { startHookReceiver } from '@seqline/testing';
import { afterEach, it } from 'vitest';
import { SECRET, TestClient, waitFor } from '../../server/test/harness.ts';
import {
  LONG_WINDOW_MS,
  runShutdownBurst,
  SHORT_WINDOW_MS,
  SHUTDOWN_HOOK_SECRET,
  shutdownHookEnv,
} from '../../server/test/shutdown-burst-scenario.ts';
import { Cluster } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

const FANOUT_POOLS = ['small', 'large', 'huge'];

/** Jobs running or waiting in the worker's fanout pools, from its /metrics. */
async function fanoutBacklog(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^seqline_worker_jobs_(?:running|waiting)\{pool="(\w+)"\} (\d+)/.exec(line);
    if (match && FANOUT_POOLS.includes(match[1]!)) total += Number(match[2]);
  }
  return total;
}

if (requireServices(await probeAll(), 'a graceful worker stop on the distributed stack')) {
  let cluster: Cluster | undefined;
  afterEach(({ task }) => {
    if (task.result?.state === 'fail' && cluster) console.log(`process logs:\n${cluster.report()}`);
  });

  it('a graceful worker stop mid-burst loses no notification window and no after-send call', async () => {
    const receiver = await startHookReceiver({ secret: SHUTDOWN_HOOK_SECRET });
    const adminToken = await issueAdminToken({ secret: SECRET, name: 'ops', ttlSeconds: 900 });
    try {
      cluster = await Cluster.start({ workers: 1, gateways: 1, env: shutdownHookEnv(receiver, LONG_WINDOW_MS) });
      const [worker, gateway] = [cluster.workers[0]!, cluster.gateways[0]!];
      const c = cluster;
      const probe = await TestClient.connect(gateway.url, 'warmup', c.tenant);
      await waitFor(
        async () => (await probe.call('send', { appinfo: 'warmup', to: { user: 'warmup2' }, type: 'text', body: {} })).ok,
        30_000,
        'a first send',
      );
      probe.close();
      await runShutdownBurst({
        url: () => gateway.url,
        tenant: c.tenant,
        receiver,
        stop: () => worker.terminate(60_000),
        start: async () => {
          Object.assign(worker.env, shutdownHookEnv(receiver, SHORT_WINDOW_MS));
          await worker.start();
          await c.waitBalanced();
        },
        adminUrl: () => gateway.httpUrl,
        offlineMembers: 200,
        // Read from CQL through the gateway's admin API while no worker runs.
        heads: async (users) =>
          new Map(
            await Promise.all(
              users.map(async (user) => {
                const res = await fetch(`${gateway.httpUrl}/v1/admin/inbox/${c.tenant}/${user}?limit=1000`, {
                  headers: { authorization: `Bearer ${adminToken}` },
                });
                const view = (await res.json()) as { entries: Array<{ seq: number }> };
                return [user, Math.max(0, ...view.entries.map((e) => e.seq))] as const;
              }),
            ),
          ),
        fanoutBacklog: () => fanoutBacklog(`${worker.httpUrl}/metrics`),
      });
    } finally {
      await cluster?.close();
      await receiver.close();
    }
  }, 400_000);
}
