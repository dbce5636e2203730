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
import { embeddedMessagingDeps, SHUTDOWN_STEPS, type ShutdownSteps } from './embedded-deps.ts';
import type { ServerThreadParts } from './server-thread-parts.ts';

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
  /** close() in its steps, for a threaded server to run each step on every thread before the next. */
  steps: ServerShutdownSteps;
}

/** The gateway stops, then the messaging steps (embedded-deps.ts), then the engine closes. */
export const SERVER_SHUTDOWN_STEPS = ['closeGateway', ...SHUTDOWN_STEPS, 'closeEngine'] as const;
export type ServerShutdownSteps = Record<(typeof SERVER_SHUTDOWN_STEPS)[number], () => Promise<void>>;

/**
 * The single-process deployment: gateway + workers on the embedded LMDB engine. The same
 * messaging service and workers run in distributed mode over other adapters. With `thread`,
 * one thread of several (server-thread.ts): its buses go over the thread hub, its gateway
 * shares the port, and its /metrics answers for every thread.
 */
export async function startEmbeddedServer(
  config: ServerConfig,
  logger: Logger,
  clock: Clock = systemClock,
  thread?: ServerThreadParts,
): Promise<RunningServer> {
  const dir = join(config.dataDir, 'db');
  // A thread's engine skips the one-time chores: the main thread ran them before starting it.
  const engine = await openEmbeddedEngine({ dir, logger, ...(thread && { startupChores: false }) });
  const composed = await embeddedMessagingDeps(engine, config, logger, clock, thread?.place);
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
    ...(thread && { reusePort: true, deviceBus: thread.deviceBus, metrics: thread.metrics, processMetrics: thread.place.hub.self === 0 }),
    admin: {
      service: new AdminService(
        adminDepsOf(deps, live, {
          ...(thread
            ? thread.countersOfProcess(() => ({ queues: queue.stats(), pools: workers.stats().pools }))
            : { queueStats: () => queue.stats(), poolStats: () => workers.stats().pools }),
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

  // The gateway stops taking requests and waits for those in flight (sends enqueue their jobs);
  // then jobs, appends, notification windows and the queue close in that order.
  const steps: ServerShutdownSteps = {
    closeGateway: () => gateway.close(),
    ...composed.steps,
    closeQueue: async () => {
      await composed.steps.closeQueue();
      workers.stop();
    },
    closeEngine: () => engine.close(),
  } satisfies ShutdownSteps & ServerShutdownSteps;
  let closing: Promise<void> | undefined;
  return {
    port: gateway.port,
    settings: live,
    workers,
    messaging,
    steps,
    close: () =>
      (closing ??= (async () => {
        for (const step of SERVER_SHUTDOWN_STEPS) await steps[step]();
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
