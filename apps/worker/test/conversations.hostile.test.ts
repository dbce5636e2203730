/**
 * The v1.1 conversation attacks (apps/server/test/hostile/conversation-attacks.ts) against the
 * distributed stack: a gateway and a worker as processes on Cassandra, Redis and NATS.
 */
import { describeConversationAttacks } from '../../server/test/hostile/conversation-attacks.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'conversation attacks on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeConversationAttacks('distributed', () => ({ connect: stack.connect, user: uniqueId }));
}
