/**
 * Class 5 of docs/security.md against the distributed stack — a gateway and a worker as
 * processes on Cassandra, Redis and NATS: what was sent comes back byte for byte through the
 * CQL row codec, the Redis timeline cache and NATS pushes; unpaired surrogates are refused up
 * front (scenarios in apps/server/test/hostile/roundtrip-scenarios.ts).
 */
import { afterAll, beforeAll } from 'vitest';
import { TestClient, waitFor } from '../../server/test/harness.ts';
import { describeRoundTrip } from '../../server/test/hostile/roundtrip-scenarios.ts';
import { Cluster, uniqueId } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

/** Default tiers: a group of 2 000 members or more is huge (read-fanout); these never connect. */
const HUGE_FILLER = Array.from({ length: 2_000 }, (_, i) => `offline${i}`);

if (requireServices(await probeAll(), 'byte-for-byte round trips on the distributed stack')) {
  let cluster: Cluster;
  const open: TestClient[] = [];
  const connect = async (user: string) => {
    const c = await TestClient.connect(cluster.gateways[0]!.url, user, cluster.tenant);
    open.push(c);
    return c;
  };
  beforeAll(async () => {
    cluster = await Cluster.start({ workers: 1, gateways: 1 });
    const probe = await connect('warmup');
    await waitFor(async () => (await probe.call('send', { appinfo: 'warmup', to: { user: 'warmup2' }, type: 'text', body: {} })).ok, 30_000, 'a first send');
  }, 240_000);
  afterAll(async () => {
    for (const c of open) c.close();
    await cluster?.close();
  }, 60_000);

  describeRoundTrip('distributed', () => ({
    connect,
    httpUrl: cluster.gateways[0]!.httpUrl,
    tenant: cluster.tenant,
    user: uniqueId,
    hugeFiller: HUGE_FILLER,
    numRuns: 150,
  }));
}
