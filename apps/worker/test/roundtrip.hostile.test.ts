/**
 * Class 5 of docs/security.md against the distributed stack — a gateway and a worker as
 * processes on Cassandra, Redis and NATS: what was sent comes back byte for byte through the
 * CQL row codec, the Redis timeline cache and NATS pushes; unpaired surrogates are refused up
 * front (scenarios in apps/server/test/hostile/roundtrip-scenarios.ts).
 */
import { describeRoundTrip } from '../../server/test/hostile/roundtrip-scenarios.ts';
import { uniqueId } from './support/cluster.ts';
import { useOneNodeCluster } from './support/one-node-cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

/** Default tiers: a group of 2 000 members or more is huge (read-fanout); these never connect. */
const HUGE_FILLER = Array.from({ length: 2_000 }, (_, i) => `offline${i}`);

if (requireServices(await probeAll(), 'byte-for-byte round trips on the distributed stack')) {
  const stack = useOneNodeCluster();
  const connect = stack.connect;

  describeRoundTrip('distributed', () => ({
    connect,
    httpUrl: stack.cluster.gateways[0]!.httpUrl,
    tenant: stack.cluster.tenant,
    user: uniqueId,
    hugeFiller: HUGE_FILLER,
    numRuns: 150,
  }));
}
