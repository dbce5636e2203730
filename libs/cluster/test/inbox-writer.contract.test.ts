/**
 * The InboxWriter contract against distributed mode's writer: RemoteInboxWriter over the real
 * NATS, served by two ShardOwnerHosts (leases in the real Redis) that split the shards, so a
 * follow-up runs in place or is forwarded to the other host.
 */
import { describe } from 'vitest';
import { inboxWriterContract } from '@seqline/testing';
import { clusterRig } from './support/cluster.ts';
import { waitFor } from './support/doubles.ts';
import { probeServices, useSuiteServices } from './support/services.ts';

const services = await probeServices();
const SHARDS = 8;

describe.skipIf(!services.ok)('distributed InboxWriter', () => {
  const svc = useSuiteServices();
  inboxWriterContract('RemoteInboxWriter → two ShardOwnerHosts (NATS, Redis)', async () => {
    const rig = clusterRig({ ...svc, shardCount: SHARDS, ttl: 1000 });
    const a = rig.host('host-a');
    const b = rig.host('host-b');
    await Promise.all([a.start(), b.start()]);
    await waitFor(
      'both hosts serving a split of all shards',
      () => {
        const sa = a.servingShards().length;
        const sb = b.servingShards().length;
        return sa > 0 && sb > 0 && sa + sb === SHARDS;
      },
      20_000,
    );
    return { store: { writer: rig.writer(), timeline: svc.store.engine.timeline }, close: () => rig.cleanup() };
  });
});
