export { openEmbeddedEngine, type EmbeddedEngine, type EmbeddedEngineOptions } from './embedded/engine.ts';
export {
  openScyllaStores, migrateSchema, backfillAppinfoIndex, schemaStatus, loadMigrations, DEFAULT_REPLICATION, DEFAULT_SCHEMA_DIR, ENTRY_COLUMNS, entryParams, TIMELINE_TABLES,
  type ScyllaStores, type ScyllaStoresOptions, type MigrateOptions, type MigrateResult, type Migration,
  type MigrationProgress, type Replication, type SchemaStatus,
  type AppinfoBackfillOptions, type AppinfoBackfillProgress, type AppinfoBackfillResult,
} from './scylla/index.ts';
