/**
 * The offline-notification scenarios (apps/server/test/offline-notify-scenarios.ts) on the
 * distributed stack: a gateway and a worker as processes on Cassandra, Redis and NATS. The
 * worker's shard owners coalesce, its queue consumer posts; "online" is the gateway's presence.
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll } from 'vitest';
import { TestClient, waitFor } from '../../server/test/harness.ts';
import { describeOfflineNotify, NOTIFY_SECRET, notifyEnv } from '../../server/test/offline-notify-scenarios.ts';
import { Cluster, uniqueId } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'offline notifications on the distributed stack')) {
  let cluster: Cluster | undefined;
  let receiver: HookReceiver;
  const open: TestClient[] = [];
  const connect = async (user: string) => {
    if (!cluster) throw new Error('the cluster is not started');
    const c = await TestClient.connect(cluster.gateways[0]!.url, user, cluster.tenant);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
    cluster = await Cluster.start({ workers: 1, gateways: 1, env: notifyEnv(receiver) });
    const probe = await connect('warmup');
    await waitFor(
      async () => (await probe.call('send', { appinfo: 'warmup', to: { user: 'warmup2' }, type: 'text', body: {} })).ok,
      30_000,
      'a first send',
    );
  }, 240_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await cluster?.close();
    await receiver?.close();
  }, 60_000);

  describeOfflineNotify('distributed', () => {
    if (!receiver) throw new Error('the receiver is not started');
    return { connect, id: uniqueId, receiver };
  });
}
