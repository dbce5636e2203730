import { RemoteGroupStreamWriter } from '@seqline/cluster';
import { systemClock, type Clock, type HooksOf, type Logger, type TenantHooks } from '@seqline/core';
import { LiveSettings, OfflineNotifier, type MessagingDeps } from '@seqline/messaging';
import { createHttpHookTransport } from '@seqline/hooks';
import { v7 as uuidv7 } from 'uuid';
import type { DistributedInfra } from './distributed.ts';
import { warnUnsignedHooks } from './hook-defaults.ts';

export interface DistributedMessaging {
  deps: MessagingDeps;
  settings: LiveSettings;
  groupWriter: RemoteGroupStreamWriter;
  /**
   * Offline-notification windows, for a process that owns shards (a worker): its owners'
   * `onAppended`. Built on first use, so a gateway never has one. Close it before the queue
   * closes (close() does too, later, for what is left).
   */
  readonly offlineNotifier: OfflineNotifier;
  close(): Promise<void>;
}

/**
 * The messaging deps of a distributed process: appends (inbox and group stream) go to the
 * shard owners over NATS, reads to CQL through the Redis caches, settings are watched in CQL.
 */
export async function distributedMessagingDeps(
  infra: DistributedInfra,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<DistributedMessaging> {
  // The environment's hook defaults (SEQLINE_*_URL, SEQLINE_HOOK_SECRET…), parsed in config.ts.
  const hookDefaults: TenantHooks = infra.config.hookDefaults;
  warnUnsignedHooks(hookDefaults, logger);
  const settings = await LiveSettings.start({ store: infra.stores.settings, logger });
  const groupWriter = new RemoteGroupStreamWriter({
    nc: infra.nc,
    shardCount: infra.config.SEQLINE_SHARDS,
    subjectPrefix: infra.subjectPrefix,
    logger,
  });
  const hooksOf: HooksOf = settings.hooksOf(hookDefaults);
  let notifier: OfflineNotifier | undefined;
  const deps: MessagingDeps = {
    stores: {
      timeline: infra.readTimeline,
      groups: infra.groups,
      groupStreams: infra.stores.groupStreams,
      conversations: infra.conversations,
    },
    writers: { inbox: infra.writer, groupStream: groupWriter },
    queue: infra.queue,
    push: infra.push,
    policy: { tiers: () => settings.tiers(), limits: () => settings.limits(), readFanout: infra.config.SEQLINE_READ_FANOUT },
    env: { logger, clock, newId: () => uuidv7() },
    // Process defaults (environment) under each tenant's live override.
    hooks: { of: hooksOf, transport: createHttpHookTransport() },
  };
  return {
    deps,
    settings,
    groupWriter,
    get offlineNotifier() {
      return (notifier ??= new OfflineNotifier({
        queue: infra.queue,
        hooks: { of: hooksOf },
        presence: infra.push,
        logger,
        maxHeldItems: infra.config.SEQLINE_MAX_NOTIFY_ITEMS,
      }));
    },
    close: async () => {
      await notifier?.close();
      await groupWriter.close();
      await settings.close();
    },
  };
}
