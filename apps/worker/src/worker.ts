import type { Logger } from '@seqline/core';
import { ShardOwnerHost } from '@seqline/cluster';
import { startWorkers, type Workers } from '@seqline/messaging';
import { distributedMessagingDeps, openDistributedInfra, type DistributedConfig } from '@seqline/runtime';
import { startWorkerHttp, type WorkerHttp } from './worker-http.ts';

export interface RunningWorker {
  host: ShardOwnerHost;
  workers: Workers;
  /** Present when SEQLINE_WORKER_HTTP_PORT is set. */
  http: WorkerHttp | undefined;
  close(): Promise<void>;
}

/**
 * A worker: owns inbox and group-stream shards (leases in Redis, epochs and ceilings in CQL),
 * serves appends for them over NATS, and consumes fanout, notify and receipt jobs from JetStream.
 */
export async function startWorker(config: DistributedConfig, logger: Logger): Promise<RunningWorker> {
  const infra = await openDistributedInfra(config, logger, { followPresence: true });
  // Before the host: its owners tell the offline notifier of every append.
  const messaging = await distributedMessagingDeps(infra, logger);
  const host = new ShardOwnerHost({
    nc: infra.nc,
    redis: infra.redis,
    ceilings: infra.stores.ceilings,
    timeline: infra.writeTimeline,
    groupStreams: infra.stores.groupStreams,
    conversations: infra.conversations,
    conversationRebuilder: infra.stores.timeline,
    push: infra.push,
    logger,
    ownerId: config.SEQLINE_OWNER_ID,
    shardCount: config.SEQLINE_SHARDS,
    leaseTtlMs: config.SEQLINE_LEASE_TTL_MS,
    keyPrefix: infra.keyPrefix,
    subjectPrefix: infra.subjectPrefix,
    ownerOptions: {
      maxSeqKeys: config.SEQLINE_MAX_SEQ_KEYS,
      maxRecentAppinfos: config.SEQLINE_MAX_RECENT_APPINFOS,
      maxCachedInboxes: config.SEQLINE_MAX_CACHED_INBOXES,
      onAppended: messaging.offlineNotifier.listener,
    },
  });
  await host.start();
  const workers = await startWorkers(messaging.deps);
  const http =
    config.SEQLINE_WORKER_HTTP_PORT === undefined
      ? undefined
      : await startWorkerHttp({
          port: config.SEQLINE_WORKER_HTTP_PORT,
          host: config.HOST,
          shards: host,
          pools: () => workers.stats().pools,
          push: () => infra.push.stats(),
        });
  let closing: Promise<void> | undefined;
  return {
    host,
    workers,
    http,
    close: () =>
      (closing ??= (async () => {
        await http?.close();
        // Open notification windows go into the queue while it still takes jobs.
        await messaging.offlineNotifier.close();
        await infra.queue.close();
        workers.stop();
        await host.close();
        await messaging.close();
        await infra.close();
      })()),
  };
}
