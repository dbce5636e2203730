/**
 * When an audit finds a lost message: is it missing from Cassandra itself, or stored there but
 * not served by sync (a stale Redis cache)? Reads the inbox straight from CQL, bypassing Redis.
 */
import { inboxKey, silentLogger } from '@seqline/core';
import { openScyllaStores } from '@seqline/store/scylla';
import { E2E_KEYSPACE } from './cluster.ts';
import { CQL_CONTACT } from './services.ts';

export async function explainLost(tenant: string, lostPairs: string[], syncedHead: (user: string) => Promise<number>): Promise<string[]> {
  if (lostPairs.length === 0) return [];
  const stores = await openScyllaStores({
    contactPoints: CQL_CONTACT.split(','),
    localDataCenter: process.env.SCYLLA_LOCAL_DC ?? 'datacenter1',
    keyspace: E2E_KEYSPACE,
    logger: silentLogger,
    migrate: false,
  });
  try {
    const out: string[] = [];
    for (const pair of lostPairs.slice(0, 10)) {
      const [user, appinfo] = pair.split(' ') as [string, string];
      const inbox = inboxKey(tenant, user);
      const seq = (await stores.timeline.findSeqs(inbox, [appinfo])).get(appinfo);
      const cqlHead = await stores.timeline.headSeq(inbox);
      out.push(`${pair}: in CQL at seq ${seq ?? 'none'}, CQL head ${cqlHead}, head served by sync ${await syncedHead(user)}`);
    }
    return out;
  } finally {
    await stores.close();
  }
}
