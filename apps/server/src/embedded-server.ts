import { join } from 'node:path';
import { DEFAULT_LIMITS, DEFAULT_TIER_THRESHOLDS, systemClock, type Clock, type Logger } from '@seqline/core';
import { createLocalPushBus, createLocalWorkQueue } from '@seqline/bus';
import { createGateway } from '@seqline/gateway';
import { createMessaging, startWorkers } from '@seqline/messaging';
import { createTokenVerifier } from '@seqline/protocol';
import { InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine } from '@seqline/store';
import { v7 as uuidv7 } from 'uuid';
import type { ServerConfig } from './config.ts';

export interface RunningServer {
  port: number;
  /** Stop accepting, finish in-flight work, close the database. */
  close(): Promise<void>;
}

/**
 * The single-process deployment: gateway + workers on the embedded LMDB engine. The same
 * messaging service and workers run in distributed mode over other adapters.
 */
export async function startEmbeddedServer(config: ServerConfig, logger: Logger, clock: Clock = systemClock): Promise<RunningServer> {
  const engine = await openEmbeddedEngine({ dir: join(config.dataDir, 'db'), logger });
  // A new epoch per start: the owner claims every section above the previous owner's.
  const epoch = await engine.ceilings.nextEpoch('inbox-owner');
  const push = createLocalPushBus({ logger });
  const writer = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger, clock, epoch });
  const queue = createLocalWorkQueue({ jobs: engine.jobs, logger, clock });
  const limits = { ...DEFAULT_LIMITS };
  const tiers = { ...DEFAULT_TIER_THRESHOLDS };

  const messaging = createMessaging({
    writer, timeline: engine.timeline, groups: engine.groups, groupStreams: engine.groupStreams,
    queue, push, logger, clock, tiers: () => tiers, readFanout: config.SEQLINE_READ_FANOUT,
    newId: () => uuidv7(),
  });
  await startWorkers({
    queue, writer, logger, fanoutConcurrency: limits.smallPool, appendConcurrency: 64,
    perGroupConcurrency: () => limits.largeGroupConcurrency,
  });
  const gateway = await createGateway({
    port: config.PORT, host: config.HOST, messaging, logger,
    verifyToken: createTokenVerifier(config.secret),
    allowedOrigins: config.SEQLINE_ALLOWED_ORIGINS,
    rateLimit: { perSecond: config.SEQLINE_RATE_PER_SEC, burst: config.SEQLINE_RATE_BURST },
    transport: config.SEQLINE_TRANSPORT,
    allowWsFallback: config.SEQLINE_ALLOW_WS_FALLBACK,
  });

  let closing: Promise<void> | undefined;
  return {
    port: gateway.port,
    close: () => (closing ??= (async () => {
      await gateway.close();
      await queue.close();
      await writer.close();
      await push.close();
      await engine.close();
    })()),
  };
}
