/**
 * Two senders, one appinfo, one recipient, against the distributed stack — a gateway and a
 * worker as processes on Cassandra, Redis and NATS (scenarios in apps/server/test/).
 */
import { describeSharedAppinfo } from '../../server/test/shared-appinfo-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'shared appinfos on the distributed stack')) {
  const stack = useOneNodeCluster();
  describeSharedAppinfo('distributed', () => ({ user: uniqueId, connect: stack.connect }));
}
