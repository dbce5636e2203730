/**
 * `backfillAppinfoIndex`: entries written under schema version 1 had their appinfos in
 * `appinfo_index` only. Before the copy a resend of one is stored again and recall cannot find
 * it; after it both dedup, with the rows' TTLs and write times kept. A scratch keyspace of its
 * own: the backfill scans whole tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupKey, inboxKey, type Entry } from '@seqline/core';
import { msgEntry, uniqueTenant } from '@seqline/testing';
import { backfillAppinfoIndex, entryParams, migrateSchema, type AppinfoBackfillProgress, type ScyllaStores } from '@seqline/store/scylla';
import { newClient, openTestStores, requireOrSkip, scratchKeyspace, servicesAvailable } from './scylla-harness.ts';

const probe = await servicesAvailable();

/** Entry rows in the one layout the store reads (seq, doc); only the dedup rows are version 1's. */
const ENTRY_COLUMNS = 'bucket, seq, doc';
const v1Entry = (seq: number, appinfo: string, conv: Entry['conv']): unknown[] =>
  entryParams(msgEntry(seq, appinfo, { conv, from: 'bob', sendTime: 1_700_000_000_000, type: 'text', body: { text: 'hi' } }));

if (requireOrSkip(probe, 'CQL appinfo backfill')) {
  describe('backfill of the version-1 dedup index', () => {
    const raw = newClient();
    const ks = scratchKeyspace('seqline_backfill');
    const tenant = uniqueTenant();
    const inbox = inboxKey(tenant, 'old-timer');
    const group = groupKey(tenant, 'old-group');
    let stores: ScyllaStores;

    /** What a v1 writer left: markers, entry rows, the index rows and the head row. */
    async function writeVersion1Rows(): Promise<void> {
      const statements: { query: string; params: unknown[] }[] = [
        { query: `INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, 0)`, params: [inbox] },
        { query: `INSERT INTO ${ks}.inbox_buckets (inbox, bucket) VALUES (?, 1)`, params: [inbox] },
        { query: `INSERT INTO ${ks}.group_buckets (grp, bucket) VALUES (?, 0)`, params: [group] },
      ];
      for (const [seq, appinfo] of [
        [7, 'v1-a'],
        [70_000, 'v1-b'],
      ] as const) {
        statements.push(
          {
            query: `INSERT INTO ${ks}.timeline (inbox, ${ENTRY_COLUMNS}) VALUES (?, ?, ?, ?)`,
            params: [inbox, Math.floor(seq / 65_536), ...v1Entry(seq, appinfo, { type: 'user', id: 'bob' })],
          },
          {
            query: `INSERT INTO ${ks}.appinfo_index (inbox, appinfo, seq) VALUES (?, ?, ?) USING TIMESTAMP 1700000000000000`,
            params: [inbox, appinfo, seq],
          },
        );
      }
      statements.push(
        { query: `INSERT INTO ${ks}.appinfo_index (inbox, appinfo, seq) VALUES (?, '', 70000) USING TTL 0`, params: [inbox] },
        {
          query: `INSERT INTO ${ks}.group_stream (grp, ${ENTRY_COLUMNS}) VALUES (?, 0, ?, ?)`,
          params: [group, ...v1Entry(3, 'g1-a', { type: 'group', id: 'old-group' })],
        },
        { query: `INSERT INTO ${ks}.group_appinfo_index (grp, appinfo, seq) VALUES (?, 'g1-a', 3)`, params: [group] },
      );
      for (const statement of statements) await raw.execute(statement.query, statement.params, { prepare: true });
    }

    beforeAll(async () => {
      await migrateSchema(raw, { keyspace: ks });
      await writeVersion1Rows();
      stores = await openTestStores({ keyspace: ks });
    }, 120_000);
    afterAll(async () => {
      await stores.close();
      await raw.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
      await raw.shutdown();
    }, 60_000);

    it('before the copy, version-1 appinfos are invisible to dedup and recall', async () => {
      expect(await stores.timeline.findSeqs(inbox, ['v1-a', 'v1-b'])).toEqual(new Map());
      expect(await stores.groupStreams.findSeqs(group, ['g1-a'])).toEqual(new Map());
    });

    it('copies every index row but the head row, keeping its TTL and write time; a rerun changes nothing', async () => {
      const progress: AppinfoBackfillProgress[] = [];
      const result = await backfillAppinfoIndex(raw, { keyspace: ks, pageSize: 2, onProgress: (p) => progress.push(p) });
      expect(result).toEqual({
        keyspace: ks,
        tables: [
          { from: 'appinfo_index', to: 'timeline_appinfos', copied: 2, heads: 1 },
          { from: 'group_appinfo_index', to: 'group_stream_appinfos', copied: 1, heads: 0 },
        ],
      });
      // Page by page (2 rows each): the three inbox rows take two pages.
      expect(progress.filter((p) => p.from === 'appinfo_index').map((p) => p.copied)).toEqual([1, 2]);

      const copies = await raw.execute(
        `SELECT bucket, appinfo, seq, TTL(seq) AS ttl, WRITETIME(seq) AS written FROM ${ks}.timeline_appinfos WHERE inbox = ? AND bucket IN (0, 1)`,
        [inbox],
        { prepare: true },
      );
      const originals = await raw.execute(`SELECT appinfo, TTL(seq) AS ttl FROM ${ks}.appinfo_index WHERE inbox = ?`, [inbox], {
        prepare: true,
      });
      const originalTtl = new Map(originals.rows.map((row) => [String(row.get('appinfo')), Number(row.get('ttl'))]));
      expect(copies.rows.map((row) => [Number(row.get('bucket')), row.get('appinfo'), Number(row.get('seq'))])).toEqual([
        [0, 'v1-a', 7],
        [1, 'v1-b', 70_000],
      ]);
      for (const row of copies.rows) {
        expect(String(row.get('written'))).toBe('1700000000000000');
        // Expires with its entry, and not without a TTL. TTLs count whole seconds: the copy takes
        // the TTL left when the original was read, so it may end up to a second after it.
        expect(Number(row.get('ttl'))).toBeGreaterThan(0);
        expect(Number(row.get('ttl'))).toBeLessThanOrEqual((originalTtl.get(String(row.get('appinfo'))) ?? 0) + 1);
      }

      const again = await backfillAppinfoIndex(raw, { keyspace: ks });
      expect(again.tables.map((t) => t.copied)).toEqual([2, 1]);
      const after = await raw.execute(`SELECT appinfo FROM ${ks}.timeline_appinfos WHERE inbox = ? AND bucket IN (0, 1)`, [inbox], {
        prepare: true,
      });
      expect(after.rows.length).toBe(2);
    }, 60_000);

    it('after the copy, a resend of a version-1 entry is a duplicate and recall finds it', async () => {
      expect(await stores.timeline.findSeqs(inbox, ['v1-a', 'v1-b'])).toEqual(
        new Map([
          ['v1-a', 7],
          ['v1-b', 70_000],
        ]),
      );
      expect(await stores.groupStreams.findSeqs(group, ['g1-a'])).toEqual(new Map([['g1-a', 3]]));
      // A writer term that starts now loads the window (buckets 0 and 1) with the copied rows.
      const fresh = await openTestStores({ keyspace: ks });
      try {
        const resend: Entry[] = [msgEntry(70_001, 'v1-b'), msgEntry(70_002, 'v1-a'), msgEntry(70_003, 'new-c')];
        expect(await fresh.timeline.append(inbox, resend)).toEqual([
          { seq: 70_000, duplicate: true },
          { seq: 7, duplicate: true },
          { seq: 70_003, duplicate: false },
        ]);
        expect(await fresh.groupStreams.append(group, [msgEntry(4, 'g1-a')])).toEqual([{ seq: 3, duplicate: true }]);
      } finally {
        await fresh.close();
      }
    }, 60_000);

    it('refuses a keyspace name that is not one', async () => {
      await expect(backfillAppinfoIndex(raw, { keyspace: 'no such; DROP' })).rejects.toThrow(/invalid keyspace name/);
    });
  });
}
