/**
 * The CQL stores for the cluster tests: the cluster the store suites use (SCYLLA_CONTACT_POINTS,
 * SCYLLA_LOCAL_DC). Opening the stores is the probe: it connects and migrates the keyspace.
 */
import { openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';
import { probeServices } from './services.ts';

const CONTACT_POINTS = (process.env.SCYLLA_CONTACT_POINTS ?? '127.0.0.1:9042')
  .split(',')
  .map((p) => p.trim())
  .filter((p) => p.length > 0);

/** The keyspace the store suites share; a test on it gives every inbox a tenant of its own. */
export const SHARED_KEYSPACE = process.env.SCYLLA_TEST_KEYSPACE ?? 'seqline_test';

export type CqlStoresProbe = { ok: true; stores: ScyllaStores } | { ok: false; reason: string };

/** The stores on `keyspace` (created and migrated when missing), or why not. */
export async function openCqlStores(keyspace: string): Promise<CqlStoresProbe> {
  try {
    const stores = await openScyllaStores({
      contactPoints: CONTACT_POINTS,
      localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1',
      keyspace,
      migrate: true,
    });
    return { ok: true, stores };
  } catch (err) {
    return {
      ok: false,
      reason: `no CQL cluster at ${CONTACT_POINTS.join(',')}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    };
  }
}

/** Redis and NATS first (probeServices), then the stores on `keyspace`: all three, or why not. */
export async function openServicesAndCql(keyspace: string): Promise<CqlStoresProbe> {
  const services = await probeServices();
  return services.ok ? openCqlStores(keyspace) : { ok: false, reason: services.reason };
}
