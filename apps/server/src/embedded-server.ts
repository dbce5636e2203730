import { join } from 'node:path';
import { systemClock, type Clock, type Logger } from '@seqline/core';
import { createGateway, DEV_TOKEN_PATH, loadStaticSite, type DevTokenIssuer, type StaticSite } from '@seqline/gateway';
import {
  AdminService,
  adminDepsOf,
  createMessaging,
  startWorkers,
  type LiveSettings,
  type Messaging,
  type Workers,
} from '@seqline/messaging';
import { createAdminTokenVerifier, createTokenVerifier, issueToken } from '@seqline/protocol';
import { registerBoundGauges } from '@seqline/runtime/bounds';
import { openEmbeddedEngine } from '@seqline/store';
import type { ServerConfig } from './config.ts';
import { embeddedMessagingDeps } from './embedded-deps.ts';

export interface RunningServer {
  port: number;
  /** Tier thresholds and limits in force, changed live through the admin API. */
  settings: LiveSettings;
  /** Per-tier worker pools: live counters (pool use, per-group concurrency, merged inserts). */
  workers: Workers;
  /** The messaging service the gateway serves (in-process callers, tests). */
  messaging: Messaging;
  /** Stop accepting, finish in-flight work, close the database. */
  close(): Promise<void>;
}

/**
 * The single-process deployment: gateway + workers on the embedded LMDB engine. The same
 * messaging service and workers run in distributed mode over other adapters.
 */
export async function startEmbeddedServer(config: ServerConfig, logger: Logger, clock: Clock = systemClock): Promise<RunningServer> {
  const engine = await openEmbeddedEngine({ dir: join(config.dataDir, 'db'), logger });
  const composed = await embeddedMessagingDeps(engine, config, logger, clock);
  const { deps, settings: live, queue } = composed;
  const messaging = createMessaging(deps);
  const workers = await startWorkers(deps);
  const dev: DevRoutes = config.SEQLINE_DEV_ROUTES ? await devRoutes(config, logger) : {};
  const gateway = await createGateway({
    ...dev,
    port: config.PORT,
    host: config.HOST,
    messaging,
    logger,
    processMetrics: true,
    verifyToken: createTokenVerifier(config.secret),
    allowedOrigins: config.allowedOrigins,
    rateLimit: { perSecond: config.SEQLINE_RATE_PER_SEC, burst: config.SEQLINE_RATE_BURST },
    transport: config.SEQLINE_TRANSPORT,
    loginPolicyOf: (tenant) => deps.hooks.of(tenant).loginPolicy,
    admin: {
      service: new AdminService(
        adminDepsOf(deps, live, {
          queueStats: () => queue.stats(),
          poolStats: () => workers.stats().pools,
          jobs: engine.jobs,
        }),
      ),
      verifyAdminToken: createAdminTokenVerifier(config.secret),
    },
  });

  registerBoundGauges(gateway.metrics, composed.bounds);

  if (dev.site?.has('/')) logger.info({ port: gateway.port }, `demo page: http://localhost:${gateway.port}/`);
  if (config.allowedOrigins === 'same-origin') {
    logger.info({ allowedOrigins: 'same-origin' }, "browser pages: this server's own origin only (SEQLINE_ALLOWED_ORIGINS allows others)");
  }

  let closing: Promise<void> | undefined;
  return {
    port: gateway.port,
    settings: live,
    workers,
    messaging,
    close: () =>
      (closing ??= (async () => {
        // The gateway stops taking requests and waits for those in flight (sends enqueue their
        // jobs); then jobs, appends, notification windows and the queue close in that order.
        await gateway.close();
        await composed.close();
        workers.stop();
        await engine.close();
      })()),
  };
}

/** Dev tokens last a working day; the demo asks for a new one at each sign-in. */
const DEV_TOKEN_TTL_SECONDS = 24 * 3600;

/** The demo page (when built) and the loopback-only dev token route of the embedded server. */
interface DevRoutes {
  site?: StaticSite;
  devTokens?: DevTokenIssuer;
}

async function devRoutes(config: ServerConfig, logger: Logger): Promise<DevRoutes> {
  const devTokens: DevTokenIssuer = {
    async issue(user, tenant) {
      const token = await issueToken({ secret: config.secret, user, tenant, ttlSeconds: DEV_TOKEN_TTL_SECONDS });
      return { token, expiresAt: Date.now() + DEV_TOKEN_TTL_SECONDS * 1000 };
    },
  };
  try {
    return { site: await loadStaticSite(config.SEQLINE_DEMO_DIR), devTokens };
  } catch (err) {
    logger.warn(
      { dir: config.SEQLINE_DEMO_DIR, err: err instanceof Error ? err.message : String(err) },
      `demo page not built (npm run build -w @seqline/demo): / answers 404; ${DEV_TOKEN_PATH} is on`,
    );
    return { devTokens };
  }
}
