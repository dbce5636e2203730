/**
 * Read-fanout groups in the conversation list (apps/server/test/group-conversation-scenarios.ts)
 * on the distributed stack: a gateway and a worker on Cassandra, Redis and NATS. The tiers are
 * the defaults (the settings row is shared by the keyspace), so 2 000 members who never connect
 * make each group huge.
 */
import { describeGroupConversations } from '../../server/test/group-conversation-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { createHugeGroup, useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'read-fanout group conversations on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeGroupConversations('distributed', () => ({
    connect: stack.connect,
    user: uniqueId,
    hugeGroup: async (owner, members) => (await createHugeGroup(owner, members)).group,
  }));
}
