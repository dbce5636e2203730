/**
 * Versioned CQL migrations: `schema/NNN_name.cql`, applied in version order, each recorded in
 * `<keyspace>.schema_migrations` with a checksum. Idempotent (applied versions are skipped,
 * every DDL statement is IF NOT EXISTS) and safe to run from several processes at once: a lease
 * in `<keyspace>.schema_lock` (LWT, with a TTL so a crashed runner cannot block forever) lets
 * one runner apply at a time; the others wait, then find everything applied.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { types, type Client } from 'cassandra-driver';
import { silentLogger, type Logger } from '@seqline/core';
import { checkKeyspaceName } from './cql.ts';
import { splitStatements } from './cql-script.ts';

export type Replication = Record<string, string | number>;

export const DEFAULT_REPLICATION: Replication = { class: 'SimpleStrategy', replication_factor: 1 };

/** Where the repository's migrations live (`<repo>/schema`). */
export const DEFAULT_SCHEMA_DIR = fileURLToPath(new URL('../../../../schema/', import.meta.url));

export interface MigrationProgress {
  version: number;
  name: string;
  status: 'skipped' | 'applying' | 'applied';
}

export interface MigrateOptions {
  keyspace: string;
  /** Used only when the keyspace is created. Default SimpleStrategy, replication_factor 1. */
  replication?: Replication;
  logger?: Logger;
  onProgress?: (progress: MigrationProgress) => void;
  schemaDir?: string;
  /** How long to wait for another runner's lease. Default 120 s. */
  lockTimeoutMs?: number;
}

export interface MigrateResult {
  keyspace: string;
  applied: string[];
  skipped: string[];
}

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  /** CQL statements with `{{keyspace}}` still in place. */
  statements: string[];
}

const FILE_NAME = /^(\d{3,})_([A-Za-z0-9_-]+)\.cql$/;
const LOCK_TTL_SECONDS = 300;
const SERIAL = { consistency: types.consistencies.localQuorum, serialConsistency: types.consistencies.serial };

export async function loadMigrations(dir = DEFAULT_SCHEMA_DIR): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of (await readdir(dir)).filter((name) => FILE_NAME.test(name))) {
    const text = await readFile(join(dir, file), 'utf8');
    migrations.push({
      version: Number(FILE_NAME.exec(file)?.[1]),
      name: file.replace(/\.cql$/, ''),
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text),
    });
  }
  migrations.sort((a, b) => a.version - b.version);
  const versions = migrations.map((m) => m.version);
  if (new Set(versions).size !== versions.length) throw new Error(`duplicate migration versions in ${dir}`);
  return migrations;
}

export async function migrateSchema(client: Client, options: MigrateOptions): Promise<MigrateResult> {
  const keyspace = checkKeyspaceName(options.keyspace);
  const logger = (options.logger ?? silentLogger).child({ component: 'schema-migrate', keyspace });
  const migrations = await loadMigrations(options.schemaDir);
  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = ${replicationCql(options.replication ?? DEFAULT_REPLICATION)}`,
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${keyspace}.schema_migrations (version int PRIMARY KEY, name text, checksum text, applied_at timestamp)`,
  );
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.schema_lock (name text PRIMARY KEY, owner uuid, acquired_at timestamp)`);

  const owner = types.Uuid.fromString(randomUUID());
  await acquireLock(client, keyspace, owner, options.lockTimeoutMs ?? 120_000, logger);
  const result: MigrateResult = { keyspace, applied: [], skipped: [] };
  try {
    const recorded = await appliedVersions(client, keyspace);
    for (const migration of migrations) {
      const progress = (status: MigrationProgress['status']): void =>
        options.onProgress?.({ version: migration.version, name: migration.name, status });
      const done = recorded.get(migration.version);
      if (done !== undefined) {
        if (done !== migration.checksum) {
          throw new Error(
            `migration ${migration.name} was changed after it was applied to ${keyspace} (checksum differs); add a new migration instead`,
          );
        }
        result.skipped.push(migration.name);
        progress('skipped');
        continue;
      }
      progress('applying');
      for (const statement of migration.statements) await applyStatement(client, statement.replaceAll('{{keyspace}}', keyspace));
      await client.execute(
        `INSERT INTO ${keyspace}.schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?) IF NOT EXISTS`,
        [migration.version, migration.name, migration.checksum, new Date()],
        { prepare: true, ...SERIAL },
      );
      await renewLock(client, keyspace, owner);
      result.applied.push(migration.name);
      logger.info({ migration: migration.name }, 'migration applied');
      progress('applied');
    }
    for (const version of recorded.keys()) {
      if (!migrations.some((m) => m.version === version))
        logger.warn({ version }, 'keyspace has a migration this code does not know (newer code ran?)');
    }
  } finally {
    await client
      .execute(`DELETE FROM ${keyspace}.schema_lock WHERE name = 'migrate' IF owner = ?`, [owner], { prepare: true, ...SERIAL })
      .catch((err: unknown) => logger.warn({ err }, 'could not release the migration lock (it expires by itself)'));
  }
  return result;
}

async function acquireLock(client: Client, keyspace: string, owner: types.Uuid, timeoutMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let logged = false; ; logged = true) {
    const result = await client.execute(
      `INSERT INTO ${keyspace}.schema_lock (name, owner, acquired_at) VALUES ('migrate', ?, ?) IF NOT EXISTS USING TTL ${LOCK_TTL_SECONDS}`,
      [owner, new Date()],
      { prepare: true, ...SERIAL },
    );
    if (result.wasApplied()) return;
    if (Date.now() > deadline) throw new Error(`another schema migration of ${keyspace} holds the lock; waited ${timeoutMs} ms`);
    if (!logged) logger.info({}, 'another runner is migrating; waiting for its lease');
    await new Promise((resolve) => setTimeout(resolve, 250 + Math.random() * 250));
  }
}

async function renewLock(client: Client, keyspace: string, owner: types.Uuid): Promise<void> {
  await client.execute(
    `UPDATE ${keyspace}.schema_lock USING TTL ${LOCK_TTL_SECONDS} SET acquired_at = ? WHERE name = 'migrate' IF owner = ?`,
    [new Date(), owner],
    { prepare: true, ...SERIAL },
  );
}

export interface SchemaStatus {
  keyspace: string;
  /** Versions recorded in the keyspace (empty when the keyspace or its migrations table is missing). */
  applied: number[];
  /** Known migrations not applied yet. */
  pending: string[];
}

/** What `migrateSchema` would do, without doing it (for startup checks and `schema status`). */
export async function schemaStatus(client: Client, keyspace: string, schemaDir?: string): Promise<SchemaStatus> {
  checkKeyspaceName(keyspace);
  const exists = await client.execute(
    'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, 'schema_migrations'],
    { prepare: true },
  );
  const recorded = exists.rows.length === 0 ? new Map<number, string>() : await appliedVersions(client, keyspace);
  const pending = (await loadMigrations(schemaDir)).filter((m) => !recorded.has(m.version)).map((m) => m.name);
  return { keyspace, applied: [...recorded.keys()].sort((a, b) => a - b), pending };
}

async function appliedVersions(client: Client, keyspace: string): Promise<Map<number, string>> {
  const result = await client.execute(`SELECT version, checksum FROM ${keyspace}.schema_migrations`, [], {
    prepare: true,
    consistency: types.consistencies.localQuorum,
  });
  return new Map(result.rows.map((row) => [Number(row.get('version')), String(row.get('checksum'))]));
}

/** `{'class': 'SimpleStrategy', 'replication_factor': '1'}` from an options map. */
export function replicationCql(replication: Replication): string {
  const entries = Object.entries(replication);
  if (!entries.some(([key]) => key === 'class')) throw new Error('replication needs a class');
  for (const [key] of entries) if (!/^[A-Za-z0-9_.-]+$/.test(key)) throw new Error(`bad replication option ${key}`);
  return `{${entries.map(([key, value]) => `'${key}': '${String(value).replaceAll("'", "''")}'`).join(', ')}}`;
}

/** An `ALTER TABLE … ADD` column statement (CQL engines differ on `ADD IF NOT EXISTS`). */
const ADD_COLUMN = /^ALTER\s+TABLE\s+\S+\s+ADD\s/i;
/** Cassandra: "Invalid column name doc because it conflicts with an existing column"; ScyllaDB: "… already exists". */
const COLUMN_EXISTS = /conflicts with an existing column|already exists/i;

/**
 * Runs one migration statement. A column ADD that finds the column there was applied by a run
 * that stopped before recording its version: the same outcome, so it counts as applied.
 */
async function applyStatement(client: Client, statement: string): Promise<void> {
  try {
    await client.execute(statement);
  } catch (err) {
    if (ADD_COLUMN.test(statement) && err instanceof Error && COLUMN_EXISTS.test(err.message)) return;
    throw err;
  }
}
