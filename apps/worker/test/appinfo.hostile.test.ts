/**
 * Appinfo ownership and rights-when-used attacks against the distributed stack — a gateway
 * and a worker as processes on Cassandra, Redis and NATS (scenarios in apps/server/test/hostile/).
 */
import { describeAppinfoAttacks } from '../../server/test/hostile/appinfo-attacks.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'appinfo attacks on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeAppinfoAttacks('distributed', () => ({ user: uniqueId, connect: stack.connect }));
}
