import type { Logger } from '@seqline/core';
import { ShardOwnerHost, type ShardOwnerHostOptions } from '@seqline/cluster';
import { conversationStreamSides, startWorkers, type Workers } from '@seqline/messaging';
import {
  distributedMessagingDeps,
  openDistributedInfra,
  type DistributedConfig,
  type DistributedInfra,
  type DistributedMessaging,
} from '@seqline/runtime';
import { workerBounds } from './worker-bounds.ts';
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
  const host = shardOwnerHostOf(infra, messaging, {
    logger,
    ownerId: config.SEQLINE_OWNER_ID,
    shardCount: config.SEQLINE_SHARDS,
    leaseTtlMs: config.SEQLINE_LEASE_TTL_MS,
    ownerOptions: {
      maxSeqKeys: config.SEQLINE_MAX_SEQ_KEYS,
      maxRecentAppinfos: config.SEQLINE_MAX_RECENT_APPINFOS,
      maxCachedInboxes: config.SEQLINE_MAX_CACHED_INBOXES,
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
          bounds: workerBounds(config, { shards: host, notifier: messaging.offlineNotifier }),
        });
  let closing: Promise<void> | undefined;
  return {
    host,
    workers,
    http,
    close: () =>
      // In order (docs/protocol.md, "Shutdown"): each step's work is done before what it writes
      // to closes, so no append or job of a graceful stop finds the queue closed.
      (closing ??= (async () => {
        await http?.close();
        // 1. Stop consuming: running jobs finish (their appends reach the owners, their jobs the queue).
        await infra.queue.stopConsuming();
        workers.stop();
        // 2. The owners stop taking appends and finish those in flight (each tells the notifier).
        await host.close();
        // 3. Every open notification window closes now and enqueues its job.
        await messaging.offlineNotifier.close();
        // 4. The queue refuses new jobs once those under way are stored; then the connections.
        await infra.queue.close();
        await messaging.close();
        await infra.close();
      })()),
  };
}

/** What a host takes beyond the infrastructure and the messaging deps. */
export interface HostOptions {
  logger: Logger;
  ownerId: string;
  shardCount: number;
  leaseTtlMs: number;
  /** More of each owner's options; the append listener and the stream sides are always these. */
  ownerOptions?: Omit<NonNullable<ShardOwnerHostOptions['ownerOptions']>, 'onAppended' | 'streamSides'>;
}

/** The shard owner host of a worker, on its infrastructure: its owners tell the offline notifier of every append. */
export function shardOwnerHostOf(infra: DistributedInfra, messaging: DistributedMessaging, o: HostOptions): ShardOwnerHost {
  return new ShardOwnerHost({
    nc: infra.nc,
    redis: infra.redis,
    ceilings: infra.stores.ceilings,
    timeline: infra.writeTimeline,
    groupStreams: infra.stores.groupStreams,
    conversations: infra.conversations,
    conversationRebuilder: infra.stores.timeline,
    conversationCatchUp: infra.stores.timeline,
    push: infra.push,
    logger: o.logger,
    ownerId: o.ownerId,
    shardCount: o.shardCount,
    leaseTtlMs: o.leaseTtlMs,
    keyPrefix: infra.keyPrefix,
    subjectPrefix: infra.subjectPrefix,
    ownerOptions: {
      ...o.ownerOptions,
      onAppended: messaging.offlineNotifier.listener,
      // Pushes add the stream side to read-fanout groups' states, as sync does.
      streamSides: conversationStreamSides(messaging.deps),
    },
  });
}
