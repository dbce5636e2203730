/**
 * When an audit finds a lost message: is it missing from Cassandra itself, or stored there but
 * not served by sync (a stale Redis cache)? Reads the inbox straight from CQL, bypassing Redis.
 */
import { inboxKey, silentLogger, type InboxKey, type TimelineStore } from '@seqline/core';
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
      // The pair names no sender (an appinfo is unique per sender only): look through the inbox.
      const seq = await seqOfAppinfo(stores.timeline, inbox, appinfo);
      const cqlHead = await stores.timeline.headSeq(inbox);
      out.push(`${pair}: in CQL at seq ${seq ?? 'none'}, CQL head ${cqlHead}, head served by sync ${await syncedHead(user)}`);
    }
    return out;
  } finally {
    await stores.close();
  }
}

async function seqOfAppinfo(timeline: TimelineStore, inbox: InboxKey, appinfo: string): Promise<number | undefined> {
  for (let after = 0; ;) {
    const page = await timeline.readAfter({ inbox, afterSeq: after, limit: 1000 });
    const hit = page.find((e) => e.appinfo === appinfo);
    if (hit !== undefined) return hit.seq;
    const last = page.at(-1);
    if (last === undefined) return undefined;
    after = last.seq;
  }
}
