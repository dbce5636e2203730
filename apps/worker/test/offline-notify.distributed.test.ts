/**
 * The offline-notification scenarios (apps/server/test/offline-notify-scenarios.ts) on the
 * distributed stack: a gateway and a worker as processes on Cassandra, Redis and NATS. The
 * worker's shard owners coalesce, its queue consumer posts; "online" is the gateway's presence.
 * A huge group takes 2 000 offline fillers (the default tiers).
 */
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { afterAll, beforeAll } from 'vitest';
import { describeOfflineNotify, NOTIFY_SECRET, notifyEnv } from '../../server/test/offline-notify-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { createHugeGroup, useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'offline notifications on the distributed stack')) {
  let receiver: HookReceiver | undefined;
  beforeAll(async () => {
    receiver = await startHookReceiver({ secret: NOTIFY_SECRET });
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const node = useOneNodeCluster({ env: () => notifyEnv(receiver!) });

  describeOfflineNotify('distributed', () => {
    if (!receiver) throw new Error('the receiver is not started');
    return {
      connect: (user) => node.connect(user),
      id: uniqueId,
      receiver,
      hugeGroup: async (owner, members) => (await createHugeGroup(owner, members)).group,
    };
  });
}
