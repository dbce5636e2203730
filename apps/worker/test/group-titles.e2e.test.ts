/**
 * Conversation titles and group.rename (apps/server/test/group-title-scenarios.ts) on the
 * distributed stack: a gateway and a worker on Cassandra, Redis and NATS, the CQL conversation
 * index. The tiers are the defaults (the settings row is shared by the keyspace), so 2 000
 * members who never connect make a group huge.
 */
import { describeGroupTitles } from '../../server/test/group-title-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { createHugeGroup, useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'conversation titles on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeGroupTitles('distributed', () => ({
    connect: stack.connect,
    user: uniqueId,
    async hugeGroup(owner, members) {
      const { group, fillers } = await createHugeGroup(owner, members);
      return { group, offlineMember: fillers[fillers.length - 1]! };
    },
  }));
}
