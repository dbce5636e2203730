import { defaultLease, LeasedRateLimiter, RedisHoldStore, RedisRateLimiter } from '@seqline/cache';
import type { Logger } from '@seqline/core';
import { AdminService, adminDepsOf, createMessaging } from '@seqline/messaging';
import { createAdminTokenVerifier, createTokenVerifier } from '@seqline/protocol';
import { distributedMessagingDeps, openDistributedInfra, type DistributedConfig } from '@seqline/runtime';
import { createGateway, type Gateway } from './gateway.ts';

export interface RunningGatewayProcess {
  gateway: Gateway;
  close(): Promise<void>;
}

/**
 * A distributed gateway: sockets, auth, rate limits (Redis) and the admin API. It owns no
 * inbox: appends go to the shard owners over NATS, pushes arrive on `push.u.<inbox>` only for
 * the users connected here.
 */
export async function startGatewayProcess(config: DistributedConfig, logger: Logger): Promise<RunningGatewayProcess> {
  const infra = await openDistributedInfra(config, logger);
  const messaging = await distributedMessagingDeps(infra, logger);
  const gateway = await createGateway({
    port: config.PORT,
    host: config.HOST,
    messaging: createMessaging(messaging.deps),
    logger,
    processMetrics: true,
    verifyToken: createTokenVerifier(config.SEQLINE_SECRET),
    allowedOrigins: config.SEQLINE_ALLOWED_ORIGINS,
    // Leases: most frames are admitted without a Redis round trip (docs/decisions.md, "Rate-limit leases").
    rateLimiter: new LeasedRateLimiter(
      new RedisRateLimiter({
        redis: infra.redis,
        perSecond: config.SEQLINE_RATE_PER_SEC,
        burst: config.SEQLINE_RATE_BURST,
        keyPrefix: infra.keyPrefix,
        logger,
      }),
      { lease: config.SEQLINE_RATE_LEASE ?? defaultLease(config.SEQLINE_RATE_BURST) },
    ),
    // A user held on one gateway is held on all of them (fails open when Redis is down, as the limiter does).
    holdStore: new RedisHoldStore({ redis: infra.redis, keyPrefix: infra.keyPrefix, logger }),
    transport: config.SEQLINE_TRANSPORT,
    // Ready when every shard has an owner that takes an append now (one probe per shard).
    readiness: async () => {
      const { ready, shardCount, unserved } = await infra.shardReadiness.check();
      return { ready, detail: { shards: shardCount, unserved: unserved.length } };
    },
    gatewayId: config.SEQLINE_OWNER_ID,
    loginPolicyOf: (tenant) => messaging.deps.hooks.of(tenant).loginPolicy,
    deviceBus: infra.devices,
    admin: {
      service: new AdminService(adminDepsOf(messaging.deps, messaging.settings, { queueStats: () => infra.queue.stats() })),
      verifyAdminToken: createAdminTokenVerifier(config.SEQLINE_SECRET),
    },
  });
  let closing: Promise<void> | undefined;
  return {
    gateway,
    close: () =>
      (closing ??= (async () => {
        await gateway.close();
        await messaging.close();
        await infra.close();
      })()),
  };
}
