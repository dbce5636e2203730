/**
 * Opens what every distributed process shares: CQL stores, Redis (caches, leases, limits),
 * NATS (routing, work queues, push). Gateways and workers compose their roles on top.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsDeviceBus, createNatsPushBus, createNatsWorkQueue, type NatsPushBus, type NatsWorkQueue } from '@seqline/bus';
import { CachedGroupStore, CachedTimelineStore, createCacheRedisClient, RedisEpochWatcher } from '@seqline/cache';
import { RemoteInboxWriter, ShardReadiness } from '@seqline/cluster';
import type { ConversationIndex, DeviceBusFactory, GroupStore, Logger } from '@seqline/core';
import { openScyllaStores, type ScyllaStores } from '@seqline/store/scylla';
import type { Redis } from 'ioredis';
import type { DistributedConfig } from './config.ts';

export interface DistributedInfra {
  config: DistributedConfig;
  stores: ScyllaStores;
  redis: Redis;
  nc: NatsConnection;
  epoch: RedisEpochWatcher;
  /** Cached for sync (may answer headSeq from Redis). */
  readTimeline: CachedTimelineStore;
  /** Cached for inbox owners (headSeq always from CQL: it becomes a push's prevSeq). */
  writeTimeline: CachedTimelineStore;
  groups: GroupStore;
  /**
   * The conversation index, read straight from CQL (no cache): written by the shard owners'
   * appends through writeTimeline, exact at its watermark, never ahead of the entries.
   */
  conversations: ConversationIndex;
  queue: NatsWorkQueue;
  push: NatsPushBus;
  /** Routes appends to the shard owners over NATS. */
  writer: RemoteInboxWriter;
  /** Whether every shard has an owner that takes appends now (a gateway's `/readyz`). */
  shardReadiness: ShardReadiness;
  /** A gateway's device bus (login policy, admin devices) on `<ns>.dev.*`. */
  devices: DeviceBusFactory;
  keyPrefix: string;
  subjectPrefix: string;
  close(): Promise<void>;
}

export interface InfraRole {
  /**
   * Publishes huge-group pushes (a worker): follow gateway presence from the start, so routing
   * is trusted 1.5 heartbeats after start rather than after the first push.
   */
  followPresence?: boolean;
}

export async function openDistributedInfra(config: DistributedConfig, logger: Logger, role: InfraRole = {}): Promise<DistributedInfra> {
  const ns = config.SEQLINE_NAMESPACE;
  const keyPrefix = `${ns}:`;
  const subjectPrefix = `${ns}.inbox.append`;
  const stores = await openScyllaStores({
    contactPoints: config.SCYLLA_CONTACT_POINTS,
    localDataCenter: config.SCYLLA_LOCAL_DC,
    keyspace: config.SCYLLA_KEYSPACE,
    logger,
    migrate: config.SCYLLA_MIGRATE,
  });
  const redis = createCacheRedisClient({ url: config.REDIS_URL, logger });
  await redisReady(redis, 10_000);
  // noAsyncTraces: otherwise every request builds an Error up front for its stack (5 % of a
  // gateway's CPU under load, measured); our errors carry their own context.
  const nc = await connect({
    servers: config.NATS_URL,
    name: `seqline-${config.SEQLINE_OWNER_ID}`,
    maxReconnectAttempts: -1,
    noAsyncTraces: true,
  });
  const epoch = new RedisEpochWatcher({ redis, logger });
  await epoch.start();
  const cacheOptions = { redis, keyPrefix, epoch, logger };
  const readTimeline = new CachedTimelineStore(stores.timeline, { ...cacheOptions, headSeqFromCache: true });
  const writeTimeline = new CachedTimelineStore(stores.timeline, cacheOptions);
  const groups = new CachedGroupStore(stores.groups, cacheOptions);
  const queue = createNatsWorkQueue({ nc, logger, streamPrefix: ns.toUpperCase(), subjectPrefix: `${ns}.` });
  // A push to many inboxes (huge groups) goes once to each gateway holding some of them, as
  // the gateways' presence announcements tell (per inbox only while a worker cannot trust them).
  const push = createNatsPushBus(nc, {
    logger,
    subjectRoot: `${ns}.push.u`,
    presenceRoot: `${ns}.push.p`,
    followPresence: role.followPresence,
  });
  const writer = new RemoteInboxWriter({ nc, shardCount: config.SEQLINE_SHARDS, subjectPrefix, logger });
  const shardReadiness = new ShardReadiness({ nc, shardCount: config.SEQLINE_SHARDS, subjectPrefix });

  let closing: Promise<void> | undefined;
  return {
    config,
    stores,
    redis,
    nc,
    epoch,
    readTimeline,
    writeTimeline,
    groups,
    conversations: stores.conversations,
    queue,
    push,
    writer,
    shardReadiness,
    devices: (holder) => createNatsDeviceBus(nc, holder, { root: `${ns}.dev`, logger }),
    keyPrefix,
    subjectPrefix,
    close: () =>
      (closing ??= (async () => {
        await queue.close();
        await writer.close();
        shardReadiness.close();
        await push.close();
        readTimeline.close();
        writeTimeline.close();
        if (groups instanceof CachedGroupStore) groups.close();
        epoch.stop();
        await nc.drain().catch(() => undefined);
        redis.disconnect();
        await stores.close();
      })()),
  };
}

/** Leases need Redis from the start (the cache client has no offline queue): wait for it. */
async function redisReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis not ready after ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
