/** The CQL (ScyllaDB / Apache Cassandra) adapter of the store ports, and its schema migrations. */
export { openScyllaStores, type ScyllaStores, type ScyllaStoresOptions } from './stores.ts';
export {
  DEFAULT_REPLICATION,
  DEFAULT_SCHEMA_DIR,
  loadMigrations,
  migrateSchema,
  schemaStatus,
  type MigrateOptions,
  type MigrateResult,
  type Migration,
  type MigrationProgress,
  type Replication,
  type SchemaStatus,
} from './migrate.ts';
/** The timeline row layout, for tools that write it by hand (bench/cql-write-shapes.ts). */
export { ENTRY_COLUMNS, entryParams } from './entry-codec.ts';
export { TIMELINE_TABLES } from './timeline.ts';
