/**
 * The GroupStreamAppender contract against distributed mode's writer: RemoteGroupStreamWriter
 * over the real NATS, served by two ShardOwnerHosts (leases in the real Redis) that split the
 * shards and write group streams and ceilings in the real CQL cluster. A restart closes both
 * hosts and starts two new ones: every shard gets a new owner with a higher lease epoch.
 *
 * The keyspace is this file's own (created, then dropped): gseq sections (`group-shard-<n>`)
 * and lease epochs are per keyspace, so a shared one would let other suites' owners fence ours.
 */
import { afterAll, describe } from 'vitest';
import { groupStreamAppenderContract, requireServices } from '@seqline/testing';
import type { ShardOwnerHost } from '../src/index.ts';
import { clusterRig } from './support/cluster.ts';
import { openServicesAndCql } from './support/cql.ts';
import { waitFor } from './support/doubles.ts';
import { uniqueId, useSuiteServices } from './support/services.ts';

const SHARDS = 8;
const TTL = 1000;
const KEYSPACE = uniqueId('seqline_gsa_');
const cql = await openServicesAndCql(KEYSPACE);

if (requireServices(cql, 'distributed GroupStreamAppender', 'Cassandra, Redis and NATS') && cql.ok) {
  const stores = cql.stores;
  describe('distributed GroupStreamAppender', () => {
    const svc = useSuiteServices();
    afterAll(async () => {
      await stores.client.execute(`DROP KEYSPACE IF EXISTS ${KEYSPACE}`);
      await stores.close();
    });

    groupStreamAppenderContract('RemoteGroupStreamWriter → two ShardOwnerHosts (NATS, Redis, CQL)', async () => {
      const rig = clusterRig({ ...svc, shardCount: SHARDS, ttl: TTL });
      const onCql = { ceilings: stores.ceilings, timeline: stores.timeline, groupStreams: stores.groupStreams };
      let generation = 0;
      let hosts: ShardOwnerHost[] = [];
      const startHosts = async (): Promise<void> => {
        generation++;
        hosts = [rig.host(`host-${generation}a`, onCql), rig.host(`host-${generation}b`, onCql)];
        await Promise.all(hosts.map((h) => h.start()));
        await waitFor(
          'two hosts serving a split of all shards',
          () => {
            const serving = hosts.map((h) => h.servingShards().length);
            return serving.every((n) => n > 0) && serving.reduce((a, b) => a + b, 0) === SHARDS;
          },
          20_000,
        );
      };
      const epochs = (): Map<number, number> => new Map(hosts.flatMap((h) => h.shardStates().map((s) => [s.shard, s.epoch] as const)));
      await startHosts();
      const writer = rig.groupWriter();
      return {
        store: {
          appender: writer,
          streams: stores.groupStreams,
          async restart() {
            const before = epochs();
            await Promise.all(hosts.map((h) => h.close()));
            await startHosts();
            for (const [shard, epoch] of epochs()) {
              if (!(epoch > (before.get(shard) ?? Infinity))) throw new Error(`shard ${shard} kept epoch ${epoch} across the restart`);
            }
          },
        },
        close: () => rig.cleanup(),
      };
    });
  });
}
