/**
 * The embedded engine: one LMDB environment (one directory) with a named sub-database per
 * table, shared by every store so a transaction can span tables. All writes go through one
 * WriteBatcher (group commit) with lmdb-js's default durable commit; every store method that
 * writes resolves only after its commit is flushed to disk.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import {
  silentLogger,
  type Entry,
  type GroupRecord,
  type GroupStore,
  type GroupStreamStore,
  type JobStore,
  type ConversationIndex,
  type ConversationRebuilder,
  type Logger,
  type MemberWindow,
  type SeqCeilingStore,
  type Settings,
  type SettingsStore,
  type StoredJob,
  type TimelineStore,
} from '@seqline/core';
import { LmdbSeqCeilingStore, type StoredCeiling, type StoredRelease } from './ceilings.ts';
import type { InboxLogDbs } from './conversation-dbs.ts';
import { conversationIndexParts } from './conversation-parts.ts';
import { LmdbGroupStreamStore } from './group-stream.ts';
import { LmdbGroupStore, type RecipientsKey, type RecipientsTimeKey } from './groups.ts';
import { LmdbJobStore } from './jobs.ts';
import type { JsonRow } from './json-rows.ts';
import { DB_COUNT, DB_NAMES } from './keys.ts';
import { migrateDedupKeys } from './migrate-dedup-keys.ts';
import { removeRebuildScratches } from './rebuild-scratch.ts';
import { SeqLog, type AppinfoKey, type SeqKey, type SeqLogDbs } from './seq-log.ts';
import { LmdbSettingsStore, SETTINGS_DB_NAME } from './settings.ts';
import { LmdbTimelineStore } from './timeline.ts';
import { rollBackTornWrites, WriteJournal } from './torn-writes.ts';
import { WriteBatcher } from './write-batcher.ts';

export interface EmbeddedEngineOptions {
  /** Directory holding the LMDB files (created if missing). */
  dir: string;
  logger?: Logger;
  /**
   * False leaves the conversation index unwritten (its reads then answer an empty index). For
   * measuring what the index costs an append (bench/conversations.ts) only: a server never
   * turns it off.
   */
  indexConversations?: boolean;
  /**
   * False skips the chores of the first opener in a process: removing a crash's rebuild scratches
   * and migrating stored keys. The threads of a threaded server pass it (the main thread ran them
   * before starting them): a thread restarted later must not remove another thread's live scratch.
   * Default true.
   */
  startupChores?: boolean;
  /**
   * False leaves a worker thread's write transactions unjournaled (torn-writes.ts): a thread's
   * end may then tear one. For measuring what the journal costs (bench/write-journal.ts) only.
   */
  journalWrites?: boolean;
}

export interface EmbeddedEngine {
  timeline: TimelineStore;
  /** Each inbox's conversations, written in the same transaction as the inbox's entries. */
  conversations: ConversationIndex;
  /**
   * Rebuilds an inbox's conversation index from the inbox in bounded chunks, into a copy switched
   * live with one write; the inbox's appends wait only while the rebuild finishes, compares and
   * switches, other inboxes' never (conversation-rebuild.ts): the InboxOwner's conversationRebuilder.
   */
  conversationRebuilder: ConversationRebuilder;
  groups: GroupStore;
  groupStreams: GroupStreamStore;
  ceilings: SeqCeilingStore;
  jobs: JobStore;
  /** Operator settings (tier thresholds, limits), compare-and-set by version. */
  settings: SettingsStore;
  /** Waits for queued writes, then closes the environment. Idempotent. */
  close(): Promise<void>;
}

/** Subdirectory of the engine's directory holding rebuilds' scratch environments (rebuild-scratch.ts). */
const REBUILD_SCRATCH_DIR = 'rebuild-scratch';
/** Initial map size; lmdb-js v3 grows the map on demand, so this is not a limit. */
const INITIAL_MAP_SIZE = 256 * 1024 * 1024;

export async function openEmbeddedEngine(options: EmbeddedEngineOptions): Promise<EmbeddedEngine> {
  const logger = (options.logger ?? silentLogger).child({ component: 'embedded-store' });
  await mkdir(options.dir, { recursive: true });
  const env = openEnv(options.dir);
  // A thread's end can tear its transaction (torn-writes.ts): its writes are journaled there.
  const journal = new WriteJournal(env, isMainThread || options.journalWrites === false ? undefined : threadId);
  const db = <V, K extends Key>(name: string): Database<V, K> => journal.watch(name, env.openDB<V, K>({ name }));
  const writes = new WriteBatcher(env, journal);

  const inboxLog: InboxLogDbs = {
    entries: db<JsonRow<Entry>, SeqKey>(DB_NAMES.timeline),
    appinfos: db<number, AppinfoKey>(DB_NAMES.timelineAppinfo),
  };
  // Rebuilds fold in scratch environments of their own under the engine's directory; a crash's are removed here.
  const scratchRoot = join(options.dir, REBUILD_SCRATCH_DIR);
  const chores = options.startupChores !== false;
  if (chores) {
    await rollBackTornWrites(env, logger);
    await removeRebuildScratches(scratchRoot);
  }
  const index = conversationIndexParts({ db: db(DB_NAMES.conversations), log: inboxLog, writes, logger, scratchRoot });
  const timeline = new LmdbTimelineStore(
    new SeqLog(inboxLog, writes, options.indexConversations === false ? undefined : index.writer),
    db<string[], SeqKey>(DB_NAMES.timelineReaders),
    writes,
    logger,
  );
  const groupLog: SeqLogDbs = {
    entries: db<JsonRow<Entry>, SeqKey>(DB_NAMES.groupStream),
    appinfos: db<number, AppinfoKey>(DB_NAMES.groupAppinfo),
  };
  if (chores) await migrateDedupKeys({ meta: db<number, string>(DB_NAMES.storeMeta), logs: [inboxLog, groupLog], writes, logger });
  const groupStreams = new LmdbGroupStreamStore(new SeqLog(groupLog, writes), db<number, [string, string]>(DB_NAMES.groupCursors), writes);
  const groups = new LmdbGroupStore(
    {
      groups: db<GroupRecord, string>(DB_NAMES.groups),
      members: db<MemberWindow[], [string, string]>(DB_NAMES.members),
      currentMembers: db<true, [string, string]>(DB_NAMES.currentMembers),
      userGroups: db<true, [string, string]>(DB_NAMES.userGroups),
      recipients: db<string[], RecipientsKey>(DB_NAMES.recipients),
      recipientsByTime: db<true, RecipientsTimeKey>(DB_NAMES.recipientsByTime),
    },
    writes,
  );
  const ceilings = new LmdbSeqCeilingStore(
    {
      epochs: db<number, string>(DB_NAMES.epochs),
      releases: db<StoredRelease, string>(DB_NAMES.epochReleases),
      ceilings: db<StoredCeiling, string>(DB_NAMES.ceilings),
    },
    writes,
  );
  const jobs = new LmdbJobStore(
    {
      pending: db<JsonRow<StoredJob>, string>(DB_NAMES.jobs),
      order: db<true, [number, string]>(DB_NAMES.jobOrder),
      queueOrder: db<true, [string, number, string]>(DB_NAMES.jobQueueOrder),
      dead: db<JsonRow<StoredJob>, string>(DB_NAMES.deadJobs),
      deadOrder: db<true, [number, string]>(DB_NAMES.deadOrder),
    },
    writes,
  );
  const settings = new LmdbSettingsStore(db<Settings, string>(SETTINGS_DB_NAME), writes);
  logger.info({ dir: options.dir }, 'embedded store opened');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    // Index work in chunks stops at its next chunk (nothing of it live) before the environment closes.
    closing ??= index.chunks
      .stop()
      .then(() => closeEnv(env))
      .then(() => logger.info({ dir: options.dir }, 'embedded store closed'));
    return closing;
  };
  const conversations = index.index;
  const conversationRebuilder = index.rebuilder;
  return { timeline, conversations, conversationRebuilder, groups, groupStreams, ceilings, jobs, settings, close };
}

/**
 * Puts back what a thread's torn transactions wrote (torn-writes.ts), once the thread has ended
 * and before another starts in its place. Returns the rows put back.
 */
export async function rollBackThreadWrites(options: { dir: string; threadId: number; logger?: Logger }): Promise<number> {
  const env = openEnv(options.dir);
  try {
    return await rollBackTornWrites(env, options.logger ?? silentLogger, options.threadId);
  } finally {
    await closeEnv(env);
  }
}

/** The engine's LMDB environment: one opening for the engine and for a rollback alike. */
function openEnv(dir: string): RootDatabase {
  return open({
    path: dir,
    noSubdir: false, // `dir` is a directory even when its name has a dot
    maxDbs: DB_COUNT + 5, // + settings (settings.ts), the undo records (torn-writes.ts) and spare room
    mapSize: INITIAL_MAP_SIZE,
  });
}

async function closeEnv(env: RootDatabase): Promise<void> {
  await env.flushed;
  await env.close();
}
