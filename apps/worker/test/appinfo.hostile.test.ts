/**
 * Appinfo ownership and rights-when-used attacks against the distributed stack — a gateway
 * and a worker as processes on Cassandra, Redis and NATS (scenarios in apps/server/test/hostile/).
 */
import { afterAll, beforeAll } from 'vitest';
import { TestClient, waitFor } from '../../server/test/harness.ts';
import { describeAppinfoAttacks } from '../../server/test/hostile/appinfo-attacks.ts';
import { Cluster, uniqueId } from './support/cluster.ts';
import { probeAll, requireServices } from './support/services.ts';

if (requireServices(await probeAll(), 'appinfo attacks on the distributed stack')) {
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

  describeAppinfoAttacks('distributed', () => ({ user: uniqueId, connect }));
}
