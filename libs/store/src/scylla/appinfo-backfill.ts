/**
 * Copies schema version 1's dedup index into version 2's (schema/README.md, "Upgrading from
 * version 1"). Version 1 kept one row per appinfo in `appinfo_index ((inbox), appinfo)`;
 * version 2 reads `timeline_appinfos ((inbox, bucket), appinfo)`, in the entry's partition.
 * Without the copy, a resend of an entry written under version 1 is stored again and
 * `findSeqs` (recall by appinfo) does not find it.
 *
 * Each row keeps its write time and its remaining TTL, so the copy expires with its entry and a
 * later delete still shadows it. Re-running copies the same values again: idempotent. The v1
 * head rows (appinfo '') are not copied: version 2 has no head row.
 */
import type { Client } from 'cassandra-driver';
import { checkKeyspaceName } from './cql.ts';
import { bucketOf } from './entry-codec.ts';

export interface AppinfoBackfillOptions {
  keyspace: string;
  /** Rows read per page, and so written at once at most (default 500). */
  pageSize?: number;
  /** Told after each page, per table pair. */
  onProgress?: (progress: AppinfoBackfillProgress) => void;
}

export interface AppinfoBackfillProgress {
  /** The v1 table being copied. */
  from: string;
  /** Its v2 counterpart. */
  to: string;
  copied: number;
}

export interface AppinfoBackfillResult {
  keyspace: string;
  /** Per v1 table: rows copied, head rows passed over; absent when the keyspace has no such table. */
  tables: { from: string; to: string; copied: number; heads: number }[];
}

/** Version 1's index tables, their version 2 counterparts, and the stream's key column. */
const PAIRS = [
  { from: 'appinfo_index', to: 'timeline_appinfos', key: 'inbox' },
  { from: 'group_appinfo_index', to: 'group_stream_appinfos', key: 'grp' },
] as const;

export async function backfillAppinfoIndex(client: Client, options: AppinfoBackfillOptions): Promise<AppinfoBackfillResult> {
  const keyspace = checkKeyspaceName(options.keyspace);
  const pageSize = options.pageSize ?? 500;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  const existing = await tablesOf(client, keyspace);
  const result: AppinfoBackfillResult = { keyspace, tables: [] };
  for (const pair of PAIRS) {
    if (!existing.has(pair.from)) continue;
    if (!existing.has(pair.to)) throw new Error(`${keyspace}.${pair.to} is missing: run schema migrate first`);
    const select = `SELECT ${pair.key}, appinfo, seq, TTL(seq) AS ttl, WRITETIME(seq) AS written FROM ${keyspace}.${pair.from}`;
    // Both clauses are bound: the TTL left (the copy expires with its entry) and the original write time.
    const insert = `INSERT INTO ${keyspace}.${pair.to} (${pair.key}, bucket, appinfo, seq) VALUES (?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`;
    const table = { from: pair.from, to: pair.to, copied: 0, heads: 0 };
    let pageState: string | undefined;
    do {
      const page = await client.execute(select, [], {
        prepare: true,
        fetchSize: pageSize,
        ...(pageState === undefined ? {} : { pageState }),
      });
      const writes: Promise<unknown>[] = [];
      for (const row of page.rows) {
        const appinfo = row.get('appinfo') as string | null;
        const seq = row.get('seq') as { toNumber(): number } | null;
        if (appinfo === null || appinfo === '' || seq === null) {
          table.heads++;
          continue;
        }
        const n = seq.toNumber();
        // A TTL of 0 would mean "never expires": a row without one gets the table's default.
        const ttl = (row.get('ttl') as number | null) ?? DEFAULT_TTL_SECONDS;
        writes.push(
          client.execute(insert, [row.get(pair.key), bucketOf(n), appinfo, n, Math.max(1, ttl), row.get('written')], {
            prepare: true,
            isIdempotent: true,
          }),
        );
      }
      await Promise.all(writes);
      table.copied += writes.length;
      options.onProgress?.({ from: pair.from, to: pair.to, copied: table.copied });
      pageState = page.pageState ?? undefined;
    } while (pageState !== undefined);
    result.tables.push(table);
  }
  return result;
}

/** The tables' `default_time_to_live` (schema/002_bucketed_appinfos.cql). */
const DEFAULT_TTL_SECONDS = 15_552_000;

async function tablesOf(client: Client, keyspace: string): Promise<Set<string>> {
  const rows = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace], { prepare: true });
  return new Set(rows.rows.map((row) => String(row.get('table_name'))));
}
