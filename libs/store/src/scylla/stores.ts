/**
 * The CQL adapter of the store ports (ScyllaDB, Apache Cassandra): one driver client shared by
 * every store. Token-aware routing comes from the driver's default load-balancing policy (with
 * `localDataCenter`) plus prepared statements, whose partition-key metadata gives each request
 * its routing key.
 */
import { Client } from 'cassandra-driver';
import {
  silentLogger,
  type Clock,
  type ConversationIndex,
  type GroupStore,
  type GroupStreamStore,
  type JobStore,
  type Logger,
  type SeqCeilingStore,
  type SettingsStore,
  type TimelineStore,
} from '@seqline/core';
import { CqlSeqCeilingStore } from './ceilings.ts';
import { readTimelineRetention } from './conversation-expiry.ts';
import { CqlConversationIndex } from './conversation-index.ts';
import { Cql, DEFAULT_CONSISTENCY, checkKeyspaceName, type CqlConsistency } from './cql.ts';
import { CqlGroupStreamStore } from './group-stream.ts';
import { CqlGroupStore } from './groups.ts';
import { CqlJobStore } from './jobs.ts';
import { migrateSchema, schemaStatus, type Replication } from './migrate.ts';
import { CqlSettingsStore, DEFAULT_SETTINGS_NAME } from './settings.ts';
import { CqlTimelineStore } from './timeline.ts';

export interface ScyllaStoresOptions {
  /** `host` or `host:port` (default port 9042). */
  contactPoints: string[];
  localDataCenter: string;
  keyspace: string;
  logger?: Logger;
  /** Run the schema migrations before opening (creates the keyspace if missing). */
  migrate?: boolean;
  /** Replication of a keyspace created by `migrate`. Default SimpleStrategy, RF 1. */
  replication?: Replication;
  credentials?: { username: string; password: string };
  /** Default LOCAL_QUORUM for plain reads/writes, SERIAL for LWTs. */
  consistency?: Partial<CqlConsistency>;
  /** Row of the `settings` table this deployment uses. Default `current`. */
  settingsName?: string;
  /** Keep the conversation index on every append (default true); off only to measure its cost. */
  indexConversations?: boolean;
  /**
   * The wall clock of the seq log's write timestamps (Cql.clockTimestamp; default the system's).
   * Tests inject one that jumps; the conversation index takes no timestamp from it.
   */
  clock?: Clock;
}

export interface ScyllaStores {
  /**
   * Also rebuilds an inbox's conversation index and catches it up (core's ConversationRebuilder
   * and ConversationCatchUp; run by the inbox's owner, which passes its lease guard:
   * CqlTimelineStore.rebuildConversations, .catchUpConversations).
   */
  timeline: TimelineStore & Pick<CqlTimelineStore, 'rebuildConversations' | 'catchUpConversations'>;
  /** The inboxes' conversation index, written by the timeline's appends (conversation-writer.ts). */
  conversations: ConversationIndex;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  ceilings: SeqCeilingStore;
  jobs: JobStore;
  /** Operator settings (tier thresholds, limits), compare-and-set by version. */
  settings: SettingsStore;
  /** The shared driver client (for health checks and the admin CLI). */
  client: Client;
  /** Shuts the client down after in-flight requests. Idempotent. */
  close(): Promise<void>;
}

export async function openScyllaStores(options: ScyllaStoresOptions): Promise<ScyllaStores> {
  const keyspace = checkKeyspaceName(options.keyspace);
  const logger = (options.logger ?? silentLogger).child({ component: 'scylla-store', keyspace });
  const levels: CqlConsistency = { ...DEFAULT_CONSISTENCY, ...options.consistency };
  const client = new Client({
    contactPoints: options.contactPoints,
    localDataCenter: options.localDataCenter,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    // Statements name `keyspace.table`, so the client needs no session keyspace (and can run
    // the migration that creates it).
    queryOptions: { prepare: true, consistency: levels.consistency, serialConsistency: levels.serialConsistency },
    encoding: { useUndefinedAsUnset: true },
    socketOptions: { connectTimeout: 5_000, readTimeout: 12_000 },
  });
  client.on('log', (level: string, className: string, message: string) => {
    if (level === 'warning') logger.warn({ driver: className }, message);
    else if (level === 'error') logger.error({ driver: className }, message);
  });
  try {
    await client.connect();
    if (options.migrate === true)
      await migrateSchema(client, { keyspace, logger, ...(options.replication ? { replication: options.replication } : {}) });
    else await requireSchema(client, keyspace);
  } catch (err) {
    await client.shutdown().catch(() => undefined);
    throw err;
  }
  const cql = new Cql(client, keyspace, levels, options.clock);
  let retentionSeconds: number;
  try {
    // The conversation index follows the timeline's TTL, set in one place: the schema.
    retentionSeconds = await readTimelineRetention(client, keyspace);
  } catch (err) {
    await client.shutdown().catch(() => undefined);
    throw err;
  }
  logger.info({ contactPoints: options.contactPoints, localDataCenter: options.localDataCenter, retentionSeconds }, 'CQL stores opened');

  let closing: Promise<void> | undefined;
  const timeline = new CqlTimelineStore(cql, logger, { indexConversations: options.indexConversations ?? true, retentionSeconds });
  return {
    timeline,
    conversations: new CqlConversationIndex(cql, timeline),
    groups: new CqlGroupStore(cql),
    groupStreams: new CqlGroupStreamStore(cql, logger),
    ceilings: new CqlSeqCeilingStore(cql),
    jobs: new CqlJobStore(cql),
    settings: new CqlSettingsStore(cql, options.settingsName ?? DEFAULT_SETTINGS_NAME),
    client,
    close: () => {
      closing ??= client.shutdown().then(() => logger.info({}, 'CQL stores closed'));
      return closing;
    },
  };
}

/** Fails fast with a useful message instead of "unconfigured table" on the first request. */
async function requireSchema(client: Client, keyspace: string): Promise<void> {
  const status = await schemaStatus(client, keyspace);
  if (status.pending.length > 0) {
    throw new Error(
      `keyspace ${keyspace} lacks schema migrations ${status.pending.join(', ')}; run \`seqline-admin schema migrate\` or open with migrate: true`,
    );
  }
}
