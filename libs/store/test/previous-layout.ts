/**
 * Writers of the previous version's stored layout, for the contract suites' upgrade cases: each
 * entry as that version stored it, with a dedup row keyed by the plain appinfo (before dedup
 * keys named the sender). Raw writes, past the stores, as data left on disk by that version.
 */
import { open, type Key } from 'lmdb';
import type { PreviousLayoutWriter } from '@seqline/testing';
import { newClient, TEST_KEYSPACE } from './scylla-harness.ts';

/** LMDB sub-databases of one seq log (libs/store/src/embedded/keys.ts). */
export const LMDB_TIMELINE = { entries: 'timeline', appinfos: 'timeline_appinfo' };
export const LMDB_GROUP_STREAM = { entries: 'group_stream', appinfos: 'group_appinfo' };

/** `dirOf(dataKey)` is the directory the suite's opener opens for that data key. */
export function previousLmdbLayout<K extends string>(
  dirOf: (dataKey: string) => string,
  dbs: { entries: string; appinfos: string },
): PreviousLayoutWriter<K> {
  return async (dataKey, key, entries) => {
    const env = open({ path: dirOf(dataKey), noSubdir: false, maxDbs: 40 });
    try {
      const rows = env.openDB<string, Key>({ name: dbs.entries });
      const index = env.openDB<number, Key>({ name: dbs.appinfos });
      await env.transaction(() => {
        for (const entry of entries) {
          void rows.put([key, entry.seq], JSON.stringify(entry));
          void index.put([key, entry.appinfo], entry.seq);
        }
      });
    } finally {
      await env.close();
    }
  };
}

/** CQL tables of one seq log (libs/store/src/scylla/timeline.ts, group-stream.ts). */
export const CQL_TIMELINE = { entries: 'timeline', appinfos: 'timeline_appinfos', buckets: 'inbox_buckets', key: 'inbox' };
export const CQL_GROUP_STREAM = { entries: 'group_stream', appinfos: 'group_stream_appinfos', buckets: 'group_buckets', key: 'grp' };

/** Writes into the shared test keyspace (the suites' CQL opener ignores the data key). */
export function previousCqlLayout<K extends string>(t: {
  entries: string;
  appinfos: string;
  buckets: string;
  key: string;
}): PreviousLayoutWriter<K> {
  return async (_dataKey, key, entries) => {
    const client = newClient();
    try {
      for (const entry of entries) {
        const bucket = Math.floor(entry.seq / 65_536);
        const { seq, ...doc } = entry;
        await client.execute(`INSERT INTO ${TEST_KEYSPACE}.${t.buckets} (${t.key}, bucket) VALUES (?, ?)`, [key, bucket]);
        await client.execute(`INSERT INTO ${TEST_KEYSPACE}.${t.entries} (${t.key}, bucket, seq, doc) VALUES (?, ?, ?, ?)`, [
          key,
          bucket,
          seq,
          JSON.stringify(doc),
        ]);
        await client.execute(`INSERT INTO ${TEST_KEYSPACE}.${t.appinfos} (${t.key}, bucket, appinfo, seq) VALUES (?, ?, ?, ?)`, [
          key,
          bucket,
          entry.appinfo,
          seq,
        ]);
      }
    } finally {
      await client.shutdown();
    }
  };
}
