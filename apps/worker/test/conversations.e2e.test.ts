/**
 * The v1.1 conversation scenarios (apps/server/test/conversation-scenarios.ts) against the
 * distributed stack: a gateway and a worker as processes on Cassandra, Redis and NATS, with
 * the CQL conversation index.
 */
import { describeConversations } from '../../server/test/conversation-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'conversations on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeConversations('distributed', () => ({ connect: stack.connect, user: uniqueId }));
}
