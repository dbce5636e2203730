/**
 * Every port contract suite against the CQL adapter on a real cluster (Apache Cassandra 5 in
 * dev/CI, any CQL cluster via SCYLLA_CONTACT_POINTS), plus the schema migration runner.
 * Skipped with a message when no cluster answers, unless REQUIRE_SERVICES=1.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  groupStoreContract,
  groupStreamStoreContract,
  jobStoreContract,
  seqCeilingStoreContract,
  settingsStoreContract,
  timelineStoreContract,
  type StoreOpener,
} from '@seqline/testing';
import { DEFAULT_SCHEMA_DIR, loadMigrations, migrateSchema, schemaStatus, type ScyllaStores } from '@seqline/store/scylla';
import {
  CONTACT_POINTS,
  TEST_KEYSPACE,
  newClient,
  openTestStores,
  requireOrSkip,
  scratchKeyspace,
  servicesAvailable,
} from './scylla-harness.ts';
import { CQL_GROUP_STREAM, CQL_TIMELINE, previousCqlLayout } from './previous-layout.ts';

/** The migrations shipped in schema/, in order. */
const MIGRATIONS = await loadMigrations();
const SHIPPED = MIGRATIONS.map((m) => m.name);

/** Tables a migration creates, by the names in its CREATE TABLE statements. */
function createdTables(statements: readonly string[]): string[] {
  return statements.flatMap((s) => /^CREATE TABLE IF NOT EXISTS \{\{keyspace\}\}\.(\w+)/.exec(s)?.[1] ?? []);
}

/** The final layout, created directly by 001: entries are (seq, doc) and dedup rows share their partition. */
const INIT_TABLES = [
  'dead_jobs',
  'group_buckets',
  'group_cursor',
  'group_stream',
  'group_stream_appinfos',
  'groups',
  'inbox_buckets',
  'job_order',
  'jobs',
  'seq_ceiling',
  'seq_epoch',
  'settings',
  'timeline',
  'timeline_appinfos',
  'timeline_readers',
  'user_groups',
];

const probe = await servicesAvailable();

if (requireOrSkip(probe, 'CQL adapter contracts')) {
  {
    const client = newClient();
    try {
      await migrateSchema(client, { keyspace: TEST_KEYSPACE });
    } finally {
      await client.shutdown();
    }
  }

  /** Every open is a new driver client on the shared keyspace: a reopen is a restarted process. */
  const opener =
    <T>(pick: (stores: ScyllaStores) => T): StoreOpener<T> =>
    async () => {
      const stores = await openTestStores();
      return { store: pick(stores), close: () => stores.close() };
    };
  const name = `cql at ${CONTACT_POINTS.join(',')}`;

  timelineStoreContract(
    name,
    opener((stores) => stores.timeline),
    { previousLayout: previousCqlLayout(CQL_TIMELINE) },
  );
  groupStoreContract(
    name,
    opener((stores) => stores.groups),
  );
  groupStreamStoreContract(
    name,
    opener((stores) => stores.groupStreams),
    { previousLayout: previousCqlLayout(CQL_GROUP_STREAM) },
  );
  seqCeilingStoreContract(
    name,
    opener((stores) => stores.ceilings),
  );
  jobStoreContract(
    name,
    opener((stores) => stores.jobs),
  );
  // The settings record is a singleton per name: each dataKey gets its own row (a fresh store).
  settingsStoreContract(name, async (dataKey) => {
    const stores = await openTestStores({ settingsName: `test-${dataKey}` });
    return { store: stores.settings, close: () => stores.close() };
  });

  describe('schema migrations', () => {
    const client = newClient();
    const created: string[] = [];
    afterAll(async () => {
      for (const keyspace of created) await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
      await client.shutdown();
    });

    async function tables(keyspace: string): Promise<string[]> {
      const result = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace], {
        prepare: true,
      });
      return result.rows.map((row) => String(row.get('table_name'))).sort();
    }

    /** A table's columns, its stream key (`inbox` / `grp`) left out. */
    async function columns(keyspace: string, table: string): Promise<string[]> {
      const result = await client.execute(
        'SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
        [keyspace, table],
        { prepare: true },
      );
      const keys = new Set(['inbox', 'grp']);
      return result.rows
        .map((row) => String(row.get('column_name')))
        .filter((name) => !keys.has(name))
        .sort();
    }

    it('creates the keyspace and every table once; a second run applies nothing', async () => {
      const keyspace = scratchKeyspace('seqline_mig');
      created.push(keyspace);
      const progress: string[] = [];
      const first = await migrateSchema(client, { keyspace, onProgress: (p) => progress.push(`${p.name}:${p.status}`) });
      expect(first).toEqual({ keyspace, applied: SHIPPED, skipped: [] });
      expect(progress).toEqual(SHIPPED.flatMap((name) => [`${name}:applying`, `${name}:applied`]));
      expect(createdTables(MIGRATIONS[0]?.statements ?? []).sort()).toEqual(INIT_TABLES);
      const declared = MIGRATIONS.flatMap((m) => createdTables(m.statements));
      expect(await tables(keyspace)).toEqual([...declared, 'schema_lock', 'schema_migrations'].sort());
      for (const table of ['timeline', 'group_stream']) expect(await columns(keyspace, table), table).toEqual(['bucket', 'doc', 'seq']);
      const second = await migrateSchema(client, { keyspace });
      expect(second).toEqual({ keyspace, applied: [], skipped: SHIPPED });
      expect(await schemaStatus(client, keyspace)).toEqual({ keyspace, applied: MIGRATIONS.map((m) => m.version), pending: [] });

      const replication = await client.execute('SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?', [keyspace], {
        prepare: true,
      });
      expect(replication.first()?.get('replication')).toMatchObject({
        class: 'org.apache.cassandra.locator.SimpleStrategy',
        replication_factor: '1',
      });
      const ttl = await client.execute(
        'SELECT table_name, default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name IN ?',
        [keyspace, ['timeline', 'group_stream', 'timeline_appinfos', 'group_stream_appinfos', 'inbox_buckets']],
        { prepare: true },
      );
      for (const row of ttl.rows) expect(row.get('default_time_to_live'), String(row.get('table_name'))).toBe(15_552_000);
    }, 180_000);

    it('a column ADD found applied (a run stopped before recording it) counts as applied', async () => {
      const keyspace = scratchKeyspace('seqline_mig');
      created.push(keyspace);
      const dir = await mkdtemp(join(tmpdir(), 'seqline-schema-'));
      try {
        await cp(DEFAULT_SCHEMA_DIR, dir, { recursive: true });
        await writeFile(join(dir, '997_add_column.cql'), 'ALTER TABLE {{keyspace}}.settings ADD note text;\n');
        await migrateSchema(client, { keyspace, schemaDir: dir });
        // As if the run had died after the ALTER and before recording the version.
        await client.execute(`DELETE FROM ${keyspace}.schema_migrations WHERE version = 997 IF EXISTS`);
        expect((await schemaStatus(client, keyspace, dir)).pending).toEqual(['997_add_column']);
        const rerun = await migrateSchema(client, { keyspace, schemaDir: dir });
        expect(rerun.applied).toEqual(['997_add_column']);
        expect((await schemaStatus(client, keyspace, dir)).pending).toEqual([]);
        // Any other failure of an ADD still fails the run.
        await writeFile(join(dir, '998_bad.cql'), 'ALTER TABLE {{keyspace}}.no_such_table ADD doc text;\n');
        await expect(migrateSchema(client, { keyspace, schemaDir: dir })).rejects.toThrow(/no_such_table/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }, 180_000);

    it('concurrent runners: one applies, the others wait and skip', async () => {
      const keyspace = scratchKeyspace('seqline_mig');
      created.push(keyspace);
      const runners = [newClient(), newClient(), newClient()];
      try {
        const results = await Promise.all(runners.map((runner) => migrateSchema(runner, { keyspace })));
        expect(results.flatMap((r) => r.applied)).toEqual(SHIPPED);
        expect(results.flatMap((r) => r.skipped)).toEqual([...SHIPPED, ...SHIPPED]);
      } finally {
        await Promise.all(runners.map((runner) => runner.shutdown()));
      }
      expect((await schemaStatus(client, keyspace)).pending).toEqual([]);
    }, 180_000);

    it('applies only new migrations, and refuses an applied one that was edited', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'seqline-schema-'));
      try {
        await cp(DEFAULT_SCHEMA_DIR, dir, { recursive: true });
        await writeFile(
          join(dir, '999_extra.cql'),
          '-- test only\nCREATE TABLE IF NOT EXISTS {{keyspace}}.extra_test (k text PRIMARY KEY, v text);\n',
        );
        expect((await schemaStatus(client, TEST_KEYSPACE, dir)).pending).toEqual(['999_extra']);
        const result = await migrateSchema(client, { keyspace: TEST_KEYSPACE, schemaDir: dir });
        expect(result.applied).toEqual(['999_extra']);
        expect(result.skipped).toEqual(SHIPPED);

        const original = await readFile(join(dir, '001_init.cql'), 'utf8');
        await writeFile(join(dir, '001_init.cql'), `${original}\n-- edited after it was applied\n`);
        await expect(migrateSchema(client, { keyspace: TEST_KEYSPACE, schemaDir: dir })).rejects.toThrow(/changed after it was applied/);
      } finally {
        await client.execute(`DROP TABLE IF EXISTS ${TEST_KEYSPACE}.extra_test`);
        await client.execute(`DELETE FROM ${TEST_KEYSPACE}.schema_migrations WHERE version = 999 IF EXISTS`);
        await rm(dir, { recursive: true, force: true });
      }
    }, 120_000);

    it('splits the shipped migrations into statements that all name the keyspace placeholder', async () => {
      const [init] = await loadMigrations();
      expect(init?.version).toBe(1);
      expect(init?.statements.length).toBeGreaterThan(10);
      for (const statement of init?.statements ?? []) expect(statement).toMatch(/^CREATE (TABLE|TYPE) IF NOT EXISTS \{\{keyspace\}\}\./);
    });
  });
}
