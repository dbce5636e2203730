/**
 * The messaging deps of the embedded server, composed in one place (the distributed ones are
 * libs/runtime messaging-deps.ts): the inbox owner and the group-stream writer on the LMDB
 * engine, the work queue and push bus, and the operator settings watched in the engine. One
 * thread uses the in-process buses; a thread of several, those over the thread hub (thread-deps.ts).
 */
import { systemClock, type Clock, type HooksOf, type Logger, type TenantHooks } from '@seqline/core';
import type { LocalWorkQueue } from '@seqline/bus/local';
import { conversationStreamSides, LiveSettings, OfflineNotifier, type MessagingDeps } from '@seqline/messaging';
import { createHttpHookTransport } from '@seqline/hooks';
import type { BoundReports, MaxBoundName } from '@seqline/runtime/bounds';
import { warnUnsignedHooks } from '@seqline/runtime/hook-defaults';
import { GroupStreamWriter, InboxOwner, KeyBudget } from '@seqline/seq';
import type { EmbeddedEngine } from '@seqline/store';
import { v7 as uuidv7 } from 'uuid';
import type { ServerConfig } from './config.ts';
import { embeddedBuses, type ThreadPlace } from './thread-deps.ts';

export type EmbeddedMessagingConfig = Pick<ServerConfig, 'SEQLINE_READ_FANOUT' | MaxBoundName<ServerConfig> | 'hookDefaults'>;

export interface EmbeddedMessaging {
  deps: MessagingDeps;
  /** Tier thresholds and limits in force (the deps' policy reads them live). */
  settings: LiveSettings;
  /** The deps' queue, typed as what it is here: jobs in the engine, with live counters. */
  queue: LocalWorkQueue;
  /** The owner's offline-notification windows (stats). */
  offlineNotifier: OfflineNotifier;
  /** Every SEQLINE_MAX_* bound with what is held against it (the server's /metrics reports them). */
  bounds: BoundReports<ServerConfig>;
  /**
   * The shutdown steps, in order: a threaded server runs each on every thread before the next
   * (all stop consuming, then all writers close…), since each thread writes through the others.
   */
  steps: ShutdownSteps;
  /**
   * Shuts down in order (docs/protocol.md, "Shutdown"): stops consuming jobs (running ones
   * finish), stops the writers taking appends (those in flight finish), flushes the notification
   * windows into the queue, closes the queue once its enqueues are stored, then the push bus and
   * the settings watch. The engine stays open. Call after the gateway stopped taking requests.
   */
  close(): Promise<void>;
}

export async function embeddedMessagingDeps(
  engine: EmbeddedEngine,
  config: EmbeddedMessagingConfig,
  logger: Logger,
  clock: Clock = systemClock,
  place?: ThreadPlace,
): Promise<EmbeddedMessaging> {
  // A new epoch per start (per thread): the owner claims every section above the previous owner's.
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const buses = embeddedBuses(engine, logger, clock, place);
  const { push, queue, ownedShards } = buses;
  // Each SEQLINE_MAX_* bound is for the process: each thread holds its share.
  const share = (limit: number): number => Math.ceil(limit / buses.threads);
  // One bound on the per-user (and per-group) seqs the allocators keep in memory, for the process.
  const seqKeyBudget = new KeyBudget(share(config.SEQLINE_MAX_SEQ_KEYS));
  // Operator settings: read on every use, so an admin change applies without a restart.
  // The environment's hook defaults (SEQLINE_*_URL, SEQLINE_HOOK_SECRET…), parsed in config.ts.
  const hookDefaults: TenantHooks = config.hookDefaults;
  warnUnsignedHooks(hookDefaults, logger);
  const settings = await LiveSettings.start({ store: engine.settings, logger });
  const hooksOf: HooksOf = settings.hooksOf(hookDefaults);
  const settingsRelay = buses.relaySettings(settings, logger);
  // Offline notifications are coalesced at the owner, the one writer that sees every append.
  const offlineNotifier = new OfflineNotifier({
    queue,
    hooks: { of: hooksOf },
    presence: push,
    logger,
    maxHeldItems: share(config.SEQLINE_MAX_NOTIFY_ITEMS),
  });
  const inbox = new InboxOwner({
    timeline: engine.timeline,
    ceilings: engine.ceilings,
    push,
    // Each push carries the touched conversations (`convs`): the index writer's states of the
    // append, read-fanout groups with their stream side added.
    conversations: engine.conversations,
    streamSides: conversationStreamSides({ stores: { groups: engine.groups, groupStreams: engine.groupStreams } }),
    // Rebuilds run in the inbox's queue, between its appends (seqline-admin conversations rebuild).
    conversationRebuilder: engine.conversationRebuilder,
    logger,
    clock,
    epoch,
    seqKeyBudget,
    maxCachedInboxes: share(config.SEQLINE_MAX_CACHED_INBOXES),
    onAppended: offlineNotifier.listener,
    ...(ownedShards && { ownedShards }),
  });
  // Group streams get gseqs from their own sections (group-shard-<n>) under their own epoch.
  const groupStream = new GroupStreamWriter({
    streams: engine.groupStreams,
    ceilings: engine.ceilings,
    logger,
    epoch: await engine.ceilings.nextEpoch('group-writer'),
    seqKeyBudget,
    ...(ownedShards && { ownedShards }),
  });
  const writers = buses.writers(inbox, groupStream, logger);

  const deps: MessagingDeps = {
    stores: {
      timeline: engine.timeline,
      groups: engine.groups,
      groupStreams: engine.groupStreams,
      conversations: engine.conversations,
    },
    writers: { inbox: writers.inbox, groupStream: writers.groupStream },
    queue,
    push,
    policy: { tiers: () => settings.tiers(), limits: () => settings.limits(), readFanout: config.SEQLINE_READ_FANOUT },
    env: { logger, clock, newId: () => uuidv7() },
    // Process defaults (environment) under each tenant's live override.
    hooks: { of: hooksOf, transport: createHttpHookTransport() },
  };
  const steps: ShutdownSteps = {
    stopConsuming: () => queue.stopConsuming(),
    // The writers stop taking appends (other threads' too) and finish those in flight.
    closeWriters: async () => {
      await writers.close();
      await groupStream.close();
      await inbox.close();
    },
    flushNotifier: () => offlineNotifier.close(),
    closeQueue: () => queue.close(),
    closeBuses: async () => {
      await push.close();
      await settingsRelay.close();
      await settings.close();
    },
  };
  return {
    deps,
    settings,
    queue,
    offlineNotifier,
    bounds: {
      SEQLINE_MAX_SEQ_KEYS: { limit: share(config.SEQLINE_MAX_SEQ_KEYS), fill: () => seqKeyBudget.size },
      SEQLINE_MAX_CACHED_INBOXES: { limit: share(config.SEQLINE_MAX_CACHED_INBOXES), fill: () => inbox.cachedInboxes },
      SEQLINE_MAX_NOTIFY_ITEMS: { limit: share(config.SEQLINE_MAX_NOTIFY_ITEMS), fill: () => offlineNotifier.stats().heldItems },
    },
    steps,
    close: async () => {
      for (const step of SHUTDOWN_STEPS) await steps[step]();
    },
  };
}

/** The order of embeddedMessagingDeps' shutdown steps. */
export const SHUTDOWN_STEPS = ['stopConsuming', 'closeWriters', 'flushNotifier', 'closeQueue', 'closeBuses'] as const;
export type ShutdownSteps = Record<(typeof SHUTDOWN_STEPS)[number], () => Promise<void>>;
