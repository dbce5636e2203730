/**
 * The worker's SEQLINE_MAX_* bounds with what it holds against each, reported at /metrics as
 * `seqline_bound_limit` and `seqline_bound_fill` (libs/runtime bounds.ts). Typed by the config,
 * so a new SEQLINE_MAX_* setting must be listed here to compile.
 */
import type { DistributedConfig } from '@seqline/runtime';
import type { BoundReports } from '@seqline/runtime/bounds';
import type { ShardSource } from './worker-http.ts';

export interface WorkerHoldings {
  /** The shard owners' memory (a ShardOwnerHost). */
  shards: Pick<ShardSource, 'rememberedAppinfos' | 'rememberedSeqKeys' | 'cachedInboxes'>;
  /** The offline notifier's open windows. */
  notifier: { stats(): { heldItems: number } };
}

export function workerBounds(config: DistributedConfig, held: WorkerHoldings): BoundReports<DistributedConfig> {
  return {
    SEQLINE_MAX_SEQ_KEYS: { limit: config.SEQLINE_MAX_SEQ_KEYS, fill: () => held.shards.rememberedSeqKeys },
    SEQLINE_MAX_RECENT_APPINFOS: { limit: config.SEQLINE_MAX_RECENT_APPINFOS, fill: () => held.shards.rememberedAppinfos },
    SEQLINE_MAX_CACHED_INBOXES: { limit: config.SEQLINE_MAX_CACHED_INBOXES, fill: () => held.shards.cachedInboxes },
    SEQLINE_MAX_NOTIFY_ITEMS: { limit: config.SEQLINE_MAX_NOTIFY_ITEMS, fill: () => held.notifier.stats().heldItems },
  };
}
