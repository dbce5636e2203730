import { RemoteGroupStreamWriter } from '@seqline/cluster';
import { systemClock, type Clock, type Logger } from '@seqline/core';
import { LiveSettings, type MessagingDeps } from '@seqline/messaging';
import { v7 as uuidv7 } from 'uuid';
import type { DistributedInfra } from './distributed.ts';

export interface DistributedMessaging {
  deps: MessagingDeps;
  settings: LiveSettings;
  groupWriter: RemoteGroupStreamWriter;
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
  const settings = await LiveSettings.start({ store: infra.stores.settings, logger });
  const groupWriter = new RemoteGroupStreamWriter({
    nc: infra.nc,
    shardCount: infra.config.SEQLINE_SHARDS,
    subjectPrefix: infra.subjectPrefix,
    logger,
  });
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
  };
  return {
    deps,
    settings,
    groupWriter,
    close: async () => {
      await groupWriter.close();
      await settings.close();
    },
  };
}
