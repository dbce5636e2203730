import { hostname } from 'node:os';
import { ConfigError, DEFAULT_SHARD_COUNT, readOriginList, type TenantHooks } from '@seqline/core';
import { z } from 'zod';
import { readHookDefaults } from './hook-defaults.ts';

/** Settings of a distributed process (gateway or worker), validated once at the edge. */
const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export const distributedEnvSchema = z.object({
  SCYLLA_CONTACT_POINTS: list.default(['127.0.0.1:9042']),
  SCYLLA_LOCAL_DC: z.string().default('datacenter1'),
  SCYLLA_KEYSPACE: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,47}$/)
    .default('seqline'),
  SCYLLA_MIGRATE: bool.default(true),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  NATS_URL: list.default(['nats://127.0.0.1:4222']),
  SEQLINE_SECRET: z.string().min(16, 'SEQLINE_SECRET (≥ 16 chars) is required in distributed mode'),
  SEQLINE_SHARDS: z.coerce.number().int().min(1).max(4096).default(DEFAULT_SHARD_COUNT),
  SEQLINE_OWNER_ID: z
    .string()
    .regex(/^[^|\s]+$/)
    .default(`${hostname()}-${process.pid}`),
  SEQLINE_LEASE_TTL_MS: z.coerce.number().int().min(1000).default(10_000),
  /** A worker's bound on the inboxes and groups whose current seq it keeps in memory (all shards). */
  SEQLINE_MAX_SEQ_KEYS: z.coerce.number().int().min(1).default(4_000_000),
  /** A worker's bound on the appinfos it keeps to answer resends without the store (all shards). */
  SEQLINE_MAX_RECENT_APPINFOS: z.coerce.number().int().min(0).default(100_000),
  /** A worker's bound on the inboxes whose head and queue it keeps in memory (all shards; idle ones go after 5 min anyway). */
  SEQLINE_MAX_CACHED_INBOXES: z.coerce.number().int().min(1).default(100_000),
  /** A worker's bound on the items held in open offline-notification windows (at the bound the oldest windows notify early). */
  SEQLINE_MAX_NOTIFY_ITEMS: z.coerce.number().int().min(1).default(100_000),
  /** Namespaces Redis keys, NATS subjects and streams, so deployments (or test runs) share servers safely. */
  SEQLINE_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_]{1,32}$/)
    .default('seqline'),
  SEQLINE_READ_FANOUT: bool.default(true),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** A worker's /healthz and /metrics port; unset = none (several workers may share a host). */
  SEQLINE_WORKER_HTTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HOST: z.string().default('0.0.0.0'),
  SEQLINE_TRANSPORT: z.enum(['auto', 'uws', 'ws']).default('auto'),
  /** Unset or blank: any origin (docs/protocol.md, "Browser origins"); a list that allows no browser is refused. */
  SEQLINE_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const read = readOriginList(v);
      if (read.ok) return read.origins;
      ctx.addIssue({ code: 'custom', message: read.problem });
      return z.NEVER;
    }),
  SEQLINE_RATE_PER_SEC: z.coerce.number().positive().default(200),
  SEQLINE_RATE_BURST: z.coerce.number().positive().default(400),
  /** Tokens a gateway takes from a user's shared bucket at once (1 = a Redis call per frame); unset = burst/40, 1 to 10. */
  SEQLINE_RATE_LEASE: z.coerce.number().int().min(1).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

/** `hookDefaults`: the SEQLINE_HOOK_* / *_URL / *_POLICY variables (hook-defaults.ts), each tenant's starting point. */
export type DistributedConfig = z.infer<typeof distributedEnvSchema> & { hookDefaults: TenantHooks };

export function loadDistributedConfig(env: NodeJS.ProcessEnv): DistributedConfig {
  const parsed = distributedEnvSchema.safeParse(env);
  const hooks = readHookDefaults(env);
  if (!parsed.success || hooks.issues.length > 0) {
    const lines = [...(parsed.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`), ...hooks.issues];
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return { ...parsed.data, hookDefaults: hooks.hooks };
}
